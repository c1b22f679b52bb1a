import { schemaDefaults, schemaProperties } from "@deskline/spec/values";
import type { Db } from "mongodb";
import { newEvent, type StoredEvent } from "../events/model.js";
import type { EventRelay } from "../events/outbox-relay.js";
import { duplicateKeyIndexes } from "../platform/database/errors.js";
import { newId } from "../platform/ids.js";
import {
  diffPatch,
  type FieldRules,
  hasChanges,
  normalizeField,
  normalizeInput,
  publicValues,
  toResource,
} from "../records/fields.js";
import { PulledRecords } from "../records/pulled-records.js";
import type { Decision, RecordDoc } from "../records/record.js";
import type { Tombstones } from "../records/tombstones.js";
import type { QueryOf, Schema } from "../spec/types.js";
import { type PhoneFields, type PhoneRules, phoneFields, phoneFilter } from "./phone.js";
import { contactSearchKeys, searchFilter } from "./search-keys.js";
import { UNIQUE_KEYS_INDEX, type UniqueKey, uniqueKey, writeUnique } from "./unique-keys.js";

/** The contact fields a client sets (the spec's `ContactCreate`); the response lists all of them, null when unset. */
export const CONTACT_FIELDS = schemaProperties.ContactCreate;

type ContactField = (typeof CONTACT_FIELDS)[number];
type Scalar = string | number | boolean | null;
export type ContactInput = Partial<Record<ContactField, unknown>>;

export interface ContactDoc extends Record<ContactField, unknown>, RecordDoc, PhoneFields {
  name: string;
  email: string | null;
  tags: string[];
  segments: string[];
  custom_fields: Record<string, Scalar>;
  external_ids: Record<string, string>;
  /** Lower-cased email: equality filter and uniqueness are case-insensitive. */
  email_lc: string | null;
  /** Its email and external ids as unique keys (contacts/unique-keys.ts); absent when it has none. */
  unique_keys?: string[];
  /** Set while a merge moves it into this contact (contacts/merge.ts); not in the API. */
  merged_into?: string;
  /** What `search` finds it by (contacts/search-keys.ts); not in the API. */
  search_keys?: string[];
}

const RULES: FieldRules<ContactField> = {
  fields: CONTACT_FIELDS,
  // Fields whose "unset" is not null (arrays clear to [], flags to false, maps to {}): the spec's
  // `ContactCreate` defaults, what an omitted field is; the maps' `{}` is not a spec default
  // (docs/decisions.md, "Field defaults in the spec").
  empty: { ...schemaDefaults.ContactCreate, custom_fields: {}, external_ids: {} },
  deduped: new Set(["tags", "segments"]),
  // Read from `phone` (contacts/phone.ts), never from a body.
  serverSet: ["phone_e164", "phone_country"],
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

/**
 * The filters of `listContacts`, as the spec types its query, and its `custom_fields.<key>`
 * filters read by their definitions (contacts/custom-field-values.ts `customFieldFilter`).
 */
export type ContactFilters = QueryOf<"listContacts"> & {
  custom_fields?: Record<string, string | number | boolean> | undefined;
};

/** The unique keys a contact holds: its email and each external id, per workspace. */
export function uniqueKeysOf(
  workspaceId: string,
  doc: Pick<ContactDoc, "email_lc" | "external_ids">,
): UniqueKey[] {
  const keys: UniqueKey[] = [];
  if (doc.email_lc) keys.push(emailKey(workspaceId, doc.email_lc));
  for (const [system, value] of Object.entries(doc.external_ids ?? {})) {
    keys.push(externalIdKey(workspaceId, system, value));
  }
  return keys;
}

/** The unique key of an email (case-insensitive: give it lower-cased). */
export const emailKey = (workspaceId: string, emailLc: string): UniqueKey =>
  uniqueKey(workspaceId, ["email", emailLc], "email_taken", "email");

/** The unique key of one external id. */
export const externalIdKey = (workspaceId: string, system: string, value: string): UniqueKey =>
  uniqueKey(workspaceId, ["external_id", system, value], "external_id_taken", `external_ids.${system}`);

/**
 * A new contact as stored, with its unique keys and its `contact.created` event inside (the event
 * is part of the inserted document: no contact without its event).
 */
function newContact(
  workspaceId: string,
  input: ContactInput,
  phoneRules: PhoneRules,
): { doc: ContactDoc; keys: UniqueKey[] } {
  const now = new Date();
  const doc = {
    _id: newId("con"),
    workspace_id: workspaceId,
    version: 0,
    ...normalizeInput(RULES, input),
  } as ContactDoc;
  // On create, as in a PATCH, a null inside custom_fields means "not set".
  doc.custom_fields = merge({}, doc.custom_fields) as ContactDoc["custom_fields"];
  doc.email_lc = doc.email ? doc.email.toLowerCase() : null;
  Object.assign(doc, phoneFields(doc.phone, phoneRules));
  doc.search_keys = contactSearchKeys(doc);
  doc.created_at = now;
  doc.updated_at = now;
  const keys = uniqueKeysOf(workspaceId, doc);
  if (keys.length) doc.unique_keys = keys.map((k) => k.key);
  doc.pending_events = [newEvent(workspaceId, "contact.created", toContact(doc), undefined, now)];
  return { doc, keys };
}

type Patched = { doc: ContactDoc; previous: Partial<Record<ContactField, unknown>>; event?: StoredEvent };

export class Contacts extends PulledRecords<ContactDoc, ContactFilters> {
  constructor(db: Db, relay: EventRelay, tombstones: Tombstones) {
    super({ db, collection: "contacts", noun: "contact", relay, tombstones });
  }

  async ensureIndexes(): Promise<void> {
    await this.ensureRecordIndexes(
      ["email_lc", "phone_e164", "phone", "tags", "segments", "lifecycle_stage", "search_keys"],
      [UNIQUE_KEYS_INDEX],
    );
  }

  /** Creates a contact; `phoneRules` read its phone (contacts/phone.ts), as on every write. */
  async create(workspaceId: string, input: ContactInput, phoneRules: PhoneRules): Promise<ContactDoc> {
    const { doc, keys } = newContact(workspaceId, input, phoneRules);
    return writeUnique(
      this.collection,
      "contact",
      doc._id,
      () => keys,
      () => this.insertNew(doc),
    );
  }

  /**
   * Creates many contacts in one round trip (a batch upsert's new ones), each exactly as `create`
   * would. A contact the unique index refuses (its email or an external id was taken meanwhile)
   * is left out: its place holds undefined, and the caller goes through `create`/`update` for it.
   */
  async createMany(
    workspaceId: string,
    inputs: ContactInput[],
    phoneRules: PhoneRules,
  ): Promise<(ContactDoc | undefined)[]> {
    if (inputs.length === 0) return [];
    const docs = inputs.map((input) => newContact(workspaceId, input, phoneRules).doc);
    const refused = new Set<number>();
    try {
      await this.collection.insertMany(docs, { ordered: false });
    } catch (error) {
      const indexes = duplicateKeyIndexes(error);
      if (!indexes) throw error;
      for (const index of indexes) refused.add(index);
    }
    const created = docs.map((doc, index) => (refused.has(index) ? undefined : doc));
    await this.relayedMany(
      created.flatMap((doc) => (doc ? [{ id: doc._id, events: doc.pending_events ?? [] }] : [])),
    );
    return created;
  }

  /** The contacts holding any of these unique keys, by key. */
  async findByUniqueKeys(keys: string[]): Promise<Map<string, ContactDoc>> {
    const found = new Map<string, ContactDoc>();
    for await (const doc of this.collection.find({ unique_keys: { $in: keys } })) {
      for (const key of doc.unique_keys ?? []) found.set(key, doc);
    }
    return found;
  }

  /**
   * First step of merging `id` into `survivorId` (contacts/merge.ts): marks it `merged_into` and
   * gives up its unique keys, so its email and external ids can move to the survivor. Its fields
   * stay as they are until it is deleted, so a crash here loses nothing. Returns the contact.
   */
  releaseForMerge(workspaceId: string, id: string, survivorId: string): Promise<ContactDoc> {
    return this.updateInWorkspace(workspaceId, id, async (current: ContactDoc) => {
      const done = current.merged_into === survivorId && !current.unique_keys;
      if (done) return { result: current };
      return { set: { merged_into: survivorId }, unset: ["unique_keys"], result: current };
    });
  }

  /**
   * The contacts with these E.164 numbers, by number: where several share one, the oldest (the
   * first created), so a batch matching by phone picks one contact, the same one each time.
   */
  async findByPhones(workspaceId: string, numbers: string[]): Promise<Map<string, ContactDoc>> {
    const found = new Map<string, ContactDoc>();
    const query = { workspace_id: workspaceId, phone_e164: { $in: numbers } };
    for await (const doc of this.collection.find(query).sort({ _id: -1 })) {
      found.set(doc.phone_e164 as string, doc);
    }
    return found;
  }

  /**
   * Removes an erased contact's document (contacts/erase.ts), the events it still carries relayed
   * first so that the erasure scrubs them too. Its tombstone, which records the erasure, was
   * written before; nothing stamps it again. Returns whether there was one to remove.
   */
  async removeErased(workspaceId: string, id: string): Promise<boolean> {
    const filter = this.inWorkspace(workspaceId, id);
    if (!this.relay) return (await this.collection.deleteOne(filter)).deletedCount === 1;
    return (await this.relay.deleteDrained(this.collection, filter)) !== null;
  }

  /** The contact holding a unique key (its email or an external id; see uniqueKeysOf), if any. */
  findByUniqueKey(key: string): Promise<ContactDoc | null> {
    return this.collection.findOne({ unique_keys: key });
  }

  /**
   * Applies a PATCH: only the fields sent change, null clears, maps merge per key, arrays are
   * replaced. Returns the contact and the old values of what changed (empty: nothing changed,
   * nothing was written). A concurrent PATCH makes this one re-read and merge again, so none
   * overwrites another; a taken email or external id is 409, atomically by the unique index.
   */
  async update(
    workspaceId: string,
    id: string,
    /** The PATCH body, or how to make it from the current contact (decided anew on each retry). */
    patchOrPlan: ContactInput | ((current: ContactDoc) => ContactInput),
    phoneRules: PhoneRules,
  ): Promise<Patched> {
    let keys: UniqueKey[] = [];
    return writeUnique(
      this.collection,
      "contact",
      id,
      () => keys,
      () =>
        this.updateInWorkspace<Patched>(workspaceId, id, async (current) => {
          const patch = typeof patchOrPlan === "function" ? patchOrPlan(current) : patchOrPlan;
          const decided = decidePatch(workspaceId, current, patch, phoneRules);
          keys = decided.keys;
          return decided;
        }),
    );
  }

  protected filterOf(filters: ContactFilters): Record<string, unknown> {
    return filterOf(filters);
  }
}

/** A PATCH's write: the fields that change, the unique keys after it, its `contact.updated`. */
function decidePatch(
  workspaceId: string,
  current: ContactDoc,
  patch: ContactInput,
  phoneRules: PhoneRules,
): Decision<Patched> & { keys: UniqueKey[] } {
  const diff = diffPatch(RULES, current, patch, (field, sent, old) =>
    MERGED.has(field)
      ? merge(old as Record<string, unknown>, (sent as Record<string, unknown>) ?? {})
      : normalizeField(RULES, field, sent),
  );
  const { changes, previous } = diff;
  if (!hasChanges(diff)) return { result: { doc: current, previous }, keys: [] };
  if ("phone" in changes) {
    // Its stored forms change with it, and are shown in `previous_attributes` as fields of the contact.
    const forms = phoneFields(changes.phone, phoneRules);
    for (const field of ["phone_e164", "phone_country"] as const) {
      if (forms[field] === (current[field] ?? null)) continue;
      (changes as Record<string, unknown>)[field] = forms[field];
      (previous as Record<string, unknown>)[field] = current[field] ?? null;
    }
  }

  const next = { ...current, ...changes } as ContactDoc;
  next.email_lc = next.email ? next.email.toLowerCase() : null;
  // Made again from the fields as they end up, in the same update: a search never finds a
  // contact by a name it no longer has (and one stored before the keys existed gets them).
  next.search_keys = contactSearchKeys(next);
  next.updated_at = new Date();
  const keys = uniqueKeysOf(workspaceId, next);
  next.unique_keys = keys.length ? keys.map((k) => k.key) : undefined;
  next.version = current.version + 1;
  const set = {
    ...changes,
    email_lc: next.email_lc,
    search_keys: next.search_keys,
    updated_at: next.updated_at,
  };
  const event = newEvent(
    workspaceId,
    "contact.updated",
    toContact(next),
    publicValues(previous),
    next.updated_at,
  );
  const result = { doc: next, previous, event };
  return next.unique_keys
    ? { set: { ...set, unique_keys: next.unique_keys }, event, result, keys }
    : { set, unset: ["unique_keys"], event, result, keys };
}

/** The list filters as a query: each an equality or a range some `{workspace_id, <field>, _id}` index serves. */
function filterOf(filters: ContactFilters): Record<string, unknown> {
  const filter: Record<string, unknown> = {};
  if (filters.email !== undefined) filter.email_lc = filters.email.toLowerCase();
  // Compared in E.164, read in the request's country (the route puts the workspace's there).
  if (filters.phone !== undefined)
    Object.assign(filter, phoneFilter(filters.phone, filters.phone_country ?? null));
  if (filters.lifecycle_stage !== undefined) filter.lifecycle_stage = filters.lifecycle_stage;
  // Repeated `tag`/`segment`: all must match.
  if (filters.tag?.length) filter.tags = { $all: filters.tag };
  if (filters.segment?.length) filter.segments = { $all: filters.segment };
  // Word prefixes, as exact keys (contacts/search-keys.ts).
  if (filters.search !== undefined && filters.search !== "")
    Object.assign(filter, searchFilter(filters.search));
  // Equalities on `custom_fields.<key>`, served by the key's index where it is searchable.
  Object.assign(filter, filters.custom_fields);
  return filter;
}
