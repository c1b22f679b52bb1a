// The workspace's custom field definitions (`/open/v1/custom-field-definitions`): their
// collection, its queries and indexes, and the contact indexes of the keys marked searchable.
// What a definition makes a write check lives in contacts/custom-field-values.ts; why these
// bounds and this index story: docs/decisions.md, "Typed custom fields".
import type { Collection, Db } from "mongodb";
import { CachedReads } from "../platform/cached-reads.js";
import { isDuplicateKey } from "../platform/database/errors.js";
import { DomainError, notFound } from "../platform/errors.js";
import { newId } from "../platform/ids.js";
import type { Schema } from "../spec/types.js";
import type { CustomFieldRule } from "./custom-field-values.js";

export interface CustomFieldDefinitionDoc extends CustomFieldRule {
  _id: string;
  workspace_id: string;
  label: string;
  searchable: boolean;
  created_at: Date;
  updated_at: Date;
}

/** A definition as the API and the rules read it. */
export type CustomFieldDefinition = CustomFieldDefinitionDoc;

/** The most definitions a workspace may have: every contact write reads them all. */
export const DEFINITIONS_PER_WORKSPACE = 100;

/**
 * The most distinct keys the deployment indexes (searchable in any workspace): each is an index
 * of `contacts`, and MongoDB allows 64 per collection, about 15 of which the server's own filters
 * use. Shared by every workspace that marks the same key.
 */
export const SEARCHABLE_KEYS = 32;

/** The name of a searchable key's contact index; the key's pattern keeps it a valid name. */
export const searchIndexName = (key: string) => `workspace_custom_fields.${key}_newest`;

export const toCustomFieldDefinition = (doc: CustomFieldDefinitionDoc): Schema<"CustomFieldDefinition"> => ({
  key: doc.key,
  object: "custom_field_definition",
  label: doc.label,
  type: doc.type,
  options: doc.options,
  required: doc.required,
  searchable: doc.searchable,
  created_at: doc.created_at.toISOString(),
  updated_at: doc.updated_at.toISOString(),
});

type Create = Schema<"CustomFieldDefinitionCreate">;
type Update = Schema<"CustomFieldDefinitionUpdate">;

/** Workspaces whose definitions a process keeps at once. */
const CACHED_WORKSPACES = 10_000;

export class CustomFieldDefinitions {
  private readonly collection: Collection<CustomFieldDefinitionDoc>;
  private readonly contacts: Collection;

  /** Definitions by workspace, for `cacheMs` (0: every write reads them). */
  private readonly cached: CachedReads<ReadonlyMap<string, CustomFieldDefinition>>;

  constructor(db: Db, options: { cacheMs?: number } = {}) {
    this.collection = db.collection<CustomFieldDefinitionDoc>("custom_field_definitions");
    this.contacts = db.collection("contacts");
    this.cached = new CachedReads((workspaceId) => this.read(workspaceId), {
      ttlMs: options.cacheMs ?? 0,
      max: CACHED_WORKSPACES,
    });
  }

  /** One definition per key and workspace; and the contact index of every key marked searchable. */
  async ensureIndexes(): Promise<void> {
    await this.collection.createIndexes([
      { key: { workspace_id: 1, key: 1 }, unique: true, name: "workspace_key_unique" },
      // Whether any workspace still marks a key searchable, across workspaces (its index is shared).
      { key: { key: 1, searchable: 1 }, name: "key_searchable" },
    ]);
    const searchable = await this.collection.distinct("key", { searchable: true });
    for (const key of searchable) await this.ensureSearchIndex(key);
  }

  /**
   * The workspace's definitions by key: what every contact write checks against (a create too,
   * for the required keys). Read at every write they cost a create a fifth of its rate, so a
   * process keeps them for `cacheMs` (CUSTOM_FIELD_CACHE_MS), as it keeps API keys: a change
   * applies at once in the process that made it and within `cacheMs` in the others
   * (docs/decisions.md, "Typed custom fields").
   */
  async byKey(workspaceId: string): Promise<ReadonlyMap<string, CustomFieldDefinition>> {
    return this.cached.get(workspaceId);
  }

  private async read(workspaceId: string): Promise<ReadonlyMap<string, CustomFieldDefinition>> {
    const docs = await this.collection.find({ workspace_id: workspaceId }).toArray();
    return new Map(docs.map((doc) => [doc.key, doc]));
  }

  /** Every definition of the workspace, newest first (at most DEFINITIONS_PER_WORKSPACE). */
  list(workspaceId: string): Promise<CustomFieldDefinitionDoc[]> {
    return this.collection.find({ workspace_id: workspaceId }).sort({ _id: -1 }).toArray();
  }

  async get(workspaceId: string, key: string): Promise<CustomFieldDefinitionDoc> {
    const doc = await this.collection.findOne({ workspace_id: workspaceId, key });
    if (!doc) throw notFound("custom field definition", key, "key");
    return doc;
  }

  async create(workspaceId: string, input: Create): Promise<CustomFieldDefinitionDoc> {
    const count = await this.collection.countDocuments({ workspace_id: workspaceId });
    if (count >= DEFINITIONS_PER_WORKSPACE) {
      throw new DomainError(
        "conflict",
        "custom_field_limit_reached",
        `This workspace has ${DEFINITIONS_PER_WORKSPACE} custom field definitions, the most it may have; delete one first.`,
      );
    }
    if (input.searchable) await this.assertIndexRoom(input.key);
    const now = new Date();
    const doc: CustomFieldDefinitionDoc = {
      _id: newId("cfd"),
      workspace_id: workspaceId,
      key: input.key,
      label: input.label,
      type: input.type,
      options: input.type === "select" ? (input.options ?? null) : null,
      required: input.required ?? false,
      searchable: input.searchable ?? false,
      created_at: now,
      updated_at: now,
    };
    try {
      await this.collection.insertOne(doc);
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      throw new DomainError(
        "conflict",
        "custom_field_key_taken",
        `This workspace already defines the custom field '${input.key}'; update it instead.`,
        { param: "key" },
      );
    }
    this.cached.drop(workspaceId);
    if (doc.searchable) await this.ensureSearchIndex(doc.key);
    return doc;
  }

  /** Sets the fields sent (the route checked them against the current type). */
  async update(
    workspaceId: string,
    key: string,
    changes: Omit<Update, "type">,
  ): Promise<CustomFieldDefinitionDoc> {
    const current = await this.get(workspaceId, key);
    if (changes.searchable && !current.searchable) await this.assertIndexRoom(key);
    const doc = await this.collection.findOneAndUpdate(
      { workspace_id: workspaceId, key },
      { $set: { ...changes, updated_at: new Date() } },
      { returnDocument: "after" },
    );
    if (!doc) throw notFound("custom field definition", key, "key");
    this.cached.drop(workspaceId);
    if (doc.searchable) await this.ensureSearchIndex(key);
    else if (current.searchable) await this.dropSearchIndexIfUnused(key);
    return doc;
  }

  /** Removes the definition; contacts keep their values under the key. */
  async delete(workspaceId: string, key: string): Promise<void> {
    const doc = await this.collection.findOneAndDelete({ workspace_id: workspaceId, key });
    if (!doc) throw notFound("custom field definition", key, "key");
    this.cached.drop(workspaceId);
    if (doc.searchable) await this.dropSearchIndexIfUnused(key);
  }

  /** Refuses a key that would make the deployment index more than SEARCHABLE_KEYS keys. */
  private async assertIndexRoom(key: string): Promise<void> {
    const indexed = await this.collection.distinct("key", { searchable: true });
    if (indexed.includes(key) || indexed.length < SEARCHABLE_KEYS) return;
    throw new DomainError(
      "conflict",
      "custom_field_limit_reached",
      `The deployment indexes ${SEARCHABLE_KEYS} custom field keys already, the most it may (each is a database index); mark this one \`searchable: false\`, or unmark another key.`,
      { param: "searchable" },
    );
  }

  /** `{workspace_id, custom_fields.<key>, _id}`: what the key's filter reads, newest first. */
  private async ensureSearchIndex(key: string): Promise<void> {
    await this.contacts.createIndex(
      { workspace_id: 1, [`custom_fields.${key}`]: 1, _id: -1 },
      { name: searchIndexName(key) },
    );
  }

  /**
   * Drops a key's index once no workspace marks it searchable. A definition marked by another
   * process in between keeps working without it (slower, never wrong) until the next start
   * builds it again (`ensureIndexes`).
   */
  private async dropSearchIndexIfUnused(key: string): Promise<void> {
    if (await this.collection.findOne({ key, searchable: true }, { projection: { _id: 1 } })) return;
    await this.contacts.dropIndex(searchIndexName(key)).catch((error: { code?: number }) => {
      // Gone already (another process dropped it, or no one built it): nothing to do.
      if (error.code !== 27) throw error;
    });
  }
}
