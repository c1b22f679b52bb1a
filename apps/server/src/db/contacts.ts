import type { Collection, Db, Filter } from "mongodb";
import { newId } from "../domain/ids.js";
import { schemaProperties } from "../generated/values.js";
import type { QueryOf, Schema } from "../spec/types.js";
import { RecordLocks } from "./record-locks.js";
import {
  deleteInWorkspace,
  diffPatch,
  existsInWorkspace,
  type FieldRules,
  findInWorkspace,
  hasChanges,
  newestFirst,
  normalizeField,
  normalizeInput,
  type RecordDoc,
  toResource,
  updateById,
} from "./records.js";
import { UniqueClaims, type UniqueKey } from "./unique-claims.js";

/** The contact fields a client sets (the spec's `ContactCreate`); the response lists all of them, null when unset. */
export const CONTACT_FIELDS = schemaProperties.ContactCreate;

type ContactField = (typeof CONTACT_FIELDS)[number];
type Scalar = string | number | boolean | null;
export type ContactInput = Partial<Record<ContactField, unknown>>;

export interface ContactDoc extends Record<ContactField, unknown>, RecordDoc {
  name: string;
  email: string | null;
  tags: string[];
  segments: string[];
  custom_fields: Record<string, Scalar>;
  external_ids: Record<string, string>;
  /** Lower-cased email: equality filter and uniqueness are case-insensitive. */
  email_lc: string | null;
}

const RULES: FieldRules<ContactField> = {
  fields: CONTACT_FIELDS,
  // Fields whose "unset" is not null: arrays clear to [], flags to false, maps to {}.
  empty: {
    tags: [],
    segments: [],
    do_not_contact: false,
    marketing_consent: false,
    custom_fields: {},
    external_ids: {},
  },
  deduped: new Set(["tags", "segments"]),
};
/** Maps merged per key (RFC 7396): a null value removes that key. */
const MERGED = new Set<ContactField>(["custom_fields", "external_ids"]);

/** The API shape; toResource lists exactly the spec's fields, and the tests check every response against it. */
export const toContact = (doc: ContactDoc) => toResource(RULES, "contact", doc) as Schema<"Contact">;

function merge(current: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const out = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = value;
  }
  return out;
}

/** The filters of `listContacts`, as the spec types its query. */
export type ContactFilters = QueryOf<"listContacts">;

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The unique keys a contact holds: its email and each external id, per workspace. */
function uniqueKeysOf(workspaceId: string, doc: Pick<ContactDoc, "email_lc" | "external_ids">): UniqueKey[] {
  const keys: UniqueKey[] = [];
  if (doc.email_lc) {
    keys.push({ key: `${workspaceId}:email:${doc.email_lc}`, code: "email_taken", param: "email" });
  }
  for (const [system, value] of Object.entries(doc.external_ids ?? {})) {
    keys.push({
      key: `${workspaceId}:external_id:${system}:${value}`,
      code: "external_id_taken",
      param: `external_ids.${system}`,
    });
  }
  return keys;
}

export class Contacts {
  private readonly collection: Collection<ContactDoc>;
  private readonly claims: UniqueClaims;

  private readonly locks: RecordLocks;

  constructor(db: Db) {
    this.collection = db.collection<ContactDoc>("contacts");
    this.locks = new RecordLocks(db);
    this.claims = new UniqueClaims(db.collection("contact_unique_keys"), "contact", (id) =>
      this.collection.findOne({ _id: id }, { projection: { _id: 1 } }).then((doc) => doc !== null),
    );
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ workspace_id: 1, _id: -1 }, { name: "workspace_newest" });
    await this.collection.createIndex({ workspace_id: 1, email_lc: 1 }, { name: "workspace_email" });
    await this.collection.createIndex({ workspace_id: 1, phone: 1 }, { name: "workspace_phone" });
    await this.collection.createIndex({ workspace_id: 1, tags: 1 }, { name: "workspace_tags" });
    await this.collection.createIndex(
      { workspace_id: 1, lifecycle_stage: 1 },
      { name: "workspace_lifecycle" },
    );
  }

  async create(workspaceId: string, input: ContactInput): Promise<ContactDoc> {
    const now = new Date();
    const doc = {
      _id: newId("con"),
      workspace_id: workspaceId,
      ...normalizeInput(RULES, input),
    } as ContactDoc;
    // On create, as in a PATCH, a null inside custom_fields means "not set".
    doc.custom_fields = merge({}, doc.custom_fields) as ContactDoc["custom_fields"];
    doc.email_lc = doc.email ? doc.email.toLowerCase() : null;
    doc.created_at = now;
    doc.updated_at = now;

    const keys = uniqueKeysOf(workspaceId, doc);
    await this.claims.claim(keys, doc._id);
    try {
      await this.collection.insertOne(doc);
    } catch (error) {
      await this.claims.release(keys, doc._id);
      throw error;
    }
    return doc;
  }

  get(workspaceId: string, id: string): Promise<ContactDoc> {
    return findInWorkspace(this.collection, "contact", workspaceId, id);
  }

  /** Whether the workspace has this contact (a ticket's `contact_id` must name one). */
  exists(workspaceId: string, id: string): Promise<boolean> {
    return existsInWorkspace(this.collection, workspaceId, id);
  }

  /**
   * Applies a PATCH: only the fields sent change, null clears, maps merge per key, arrays are
   * replaced. Returns the contact and the old values of what changed (empty: nothing changed,
   * nothing was written).
   */
  update(
    workspaceId: string,
    id: string,
    patch: ContactInput,
  ): Promise<{ doc: ContactDoc; previous: Partial<Record<ContactField, unknown>> }> {
    // Serialized per contact: on FerretDB two racing conditional updates can both match, and the
    // second would silently overwrite the first (see db/record-locks.ts).
    return this.locks.withLock(id, "contact", () => this.applyPatch(workspaceId, id, patch));
  }

  private async applyPatch(
    workspaceId: string,
    id: string,
    patch: ContactInput,
  ): Promise<{ doc: ContactDoc; previous: Partial<Record<ContactField, unknown>> }> {
    const current = await this.get(workspaceId, id);
    const diff = diffPatch(RULES, current, patch, (field, sent, old) =>
      MERGED.has(field)
        ? merge(old as Record<string, unknown>, (sent as Record<string, unknown>) ?? {})
        : normalizeField(RULES, field, sent),
    );
    const { changes, previous } = diff;
    if (!hasChanges(diff)) return { doc: current, previous };

    const next = { ...current, ...changes } as ContactDoc;
    next.email_lc = next.email ? next.email.toLowerCase() : null;
    next.updated_at = new Date();

    const before = uniqueKeysOf(workspaceId, current);
    const after = uniqueKeysOf(workspaceId, next);
    const added = after.filter((k) => !before.some((b) => b.key === k.key));
    const removed = before.filter((k) => !after.some((a) => a.key === k.key));
    // New values are claimed before the write and old ones released after it, so at no moment
    // does the contact hold a value nobody has claimed.
    const claimed = await this.claims.claim(added, id);
    try {
      await updateById(this.collection, "contact", id, {
        ...changes,
        email_lc: next.email_lc,
        updated_at: next.updated_at,
      } as Partial<ContactDoc>);
    } catch (error) {
      await this.claims.release(claimed, id);
      throw error;
    }
    await this.claims.release(removed, id);
    return { doc: next, previous };
  }

  async delete(workspaceId: string, id: string): Promise<void> {
    const doc = await deleteInWorkspace(this.collection, "contact", workspaceId, id);
    await this.claims.release(uniqueKeysOf(workspaceId, doc), id);
  }

  async list(workspaceId: string, base: Filter<ContactDoc>, filters: ContactFilters, limit: number) {
    const and: Filter<ContactDoc>[] = [base];
    if (filters.email !== undefined) and.push({ email_lc: filters.email.toLowerCase() });
    if (filters.phone !== undefined) and.push({ phone: filters.phone });
    if (filters.lifecycle_stage !== undefined) and.push({ lifecycle_stage: filters.lifecycle_stage });
    // Equality on an array field matches an element; one clause a value makes "all must match".
    for (const tag of filters.tag ?? []) and.push({ tags: tag });
    for (const segment of filters.segment ?? []) and.push({ segments: segment });
    if (filters.search !== undefined && filters.search !== "") {
      const pattern = { $regex: escapeRegex(filters.search), $options: "i" };
      and.push({ $or: [{ name: pattern }, { email: pattern }, { phone: pattern }] });
    }
    return newestFirst(this.collection, workspaceId, and, limit);
  }
}
