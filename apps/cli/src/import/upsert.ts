// One import row against the API: create it, or find the contact that already holds its email
// (or external id) and PATCH only what differs. Creating first costs a new contact one request
// (what most imports are); the API's 409 names the holder when the contact exists.
import {
  AuthenticationError,
  ConflictError,
  ConnectionError,
  type Contact,
  type ContactCreate,
  type Deskline,
  errorFromResponse,
  NotFoundError,
  PermissionError,
} from "@deskline/sdk";
import type { FieldCatalog } from "../fields.js";
import { patchFor } from "./diff.js";
import { rowIdempotencyKey } from "./idempotency.js";

export type Outcome = "created" | "updated" | "unchanged";

/** Errors that no other row would escape: stop the run instead of failing every row alike. */
export const isFatal = (error: unknown): boolean =>
  error instanceof AuthenticationError ||
  error instanceof PermissionError ||
  error instanceof ConnectionError;

/** How a row finds its contact: by email, or by one system of `external_ids`. */
export type Match = { kind: "email" } | { kind: "external_id"; system: string };

export function parseMatch(text: string | undefined): Match | undefined {
  if (text === undefined || text === "email") return { kind: "email" };
  const system = /^external_ids\.([A-Za-z0-9_-]{1,64})$/.exec(text)?.[1];
  return system ? { kind: "external_id", system } : undefined;
}

export interface UpsertOptions {
  deskline: Deskline;
  catalog: FieldCatalog;
  match: Match;
  /** The import file's name, part of every idempotency key. */
  file: string;
}

type Body = Record<string, unknown>;

/** The value the row is matched on, if it has one. */
export function matchValue(body: Body, match: Match): string | undefined {
  if (match.kind === "email") return typeof body.email === "string" ? body.email.toLowerCase() : undefined;
  const value = (body.external_ids as Record<string, unknown> | undefined)?.[match.system];
  return typeof value === "string" ? value : undefined;
}

function holds(contact: Contact, match: Match, value: string): boolean {
  if (match.kind === "email") return contact.email?.toLowerCase() === value;
  return (contact.external_ids as Record<string, string> | null | undefined)?.[match.system] === value;
}

/** Deleted holders replayed from an earlier 409 are retried with a new key; a few rounds at most. */
const CREATE_ATTEMPTS = 3;

export async function upsertContact(body: Body, options: UpsertOptions): Promise<Outcome> {
  const { deskline, match } = options;
  const value = matchValue(body, match);
  let salt = "";
  for (let attempt = 1; ; attempt++) {
    const key = rowIdempotencyKey(options.file, body, salt);
    const { data, error, response } = await deskline.raw.POST("/open/v1/contacts", {
      // The row's fields, mapped by the create schema's columns; the server validates them and
      // answers 400 naming the one at fault.
      body: body as ContactCreate,
      headers: { "Idempotency-Key": key },
    });
    if (response.ok && data) {
      // A replay means an earlier run created it: this run changes it only if it drifted since.
      if (response.headers.get("idempotent-replayed") !== "true") return "created";
      return reconcile(await deskline.contacts.get(data.id), body, options);
    }
    const failure = errorFromResponse(response, error);
    const conflictOnMatch =
      failure instanceof ConflictError &&
      value !== undefined &&
      (failure.code === "email_taken" || failure.code === "external_id_taken");
    if (!conflictOnMatch) throw failure;
    // The 409 names the holder in `holder_id`; a lookup by email covers a body without it.
    const holderId = failure.holderId ?? (await findByEmail(deskline, body, match));
    if (!holderId) throw failure;
    let holder: Contact;
    try {
      holder = await deskline.contacts.get(holderId);
    } catch (lookup) {
      // The 409 was replayed from an earlier run and its contact is gone: create anew.
      if (lookup instanceof NotFoundError && attempt < CREATE_ATTEMPTS) {
        salt = holderId;
        continue;
      }
      throw lookup;
    }
    if (!holds(holder, match, value)) throw failure;
    return reconcile(holder, body, options);
  }
}

async function findByEmail(deskline: Deskline, body: Body, match: Match): Promise<string | undefined> {
  if (match.kind !== "email" || typeof body.email !== "string") return undefined;
  const page = await deskline.contacts.list({ email: body.email, limit: 1 });
  return page.data[0]?.id;
}

async function reconcile(existing: Contact, body: Body, options: UpsertOptions): Promise<Outcome> {
  const patch = patchFor(body, existing as unknown as Body, options.catalog);
  if (Object.keys(patch).length === 0) return "unchanged";
  await options.deskline.contacts.update(existing.id, patch);
  return "updated";
}

/** What the row would do, found by reading only: by email where it has one, else a create. */
export async function previewContact(body: Body, options: UpsertOptions): Promise<Outcome> {
  if (typeof body.email !== "string") return "created";
  const page = await options.deskline.contacts.list({ email: body.email, limit: 1 });
  const existing = page.data[0];
  if (!existing) return "created";
  const patch = patchFor(body, existing as unknown as Body, options.catalog);
  return Object.keys(patch).length === 0 ? "unchanged" : "updated";
}
