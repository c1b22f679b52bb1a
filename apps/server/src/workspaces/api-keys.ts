import { randomBytes } from "node:crypto";
import { crc32 } from "node:zlib";
import { schemaEnums } from "@deskline/spec/values";
import type { Collection, Db } from "mongodb";
import { CachedReads } from "../platform/cached-reads.js";
import { newId } from "../platform/ids.js";
import { hashToken } from "../platform/token-hash.js";

/** Every scope an API key can carry: the admin spec's `Scope`. */
export const SCOPES = schemaEnums.Scope;
export type Scope = (typeof SCOPES)[number];

export interface ApiKeyDoc {
  /**
   * SHA-256 of the plaintext key, hex: the natural key, which authentication looks up on every
   * request (unique, and served by the `_id` index on every database). The plaintext is shown
   * once and never stored.
   */
  _id: string;
  /** The public id (`key_…`), used by the admin API. */
  id: string;
  workspace_id: string;
  name: string;
  scopes: Scope[];
  key_prefix: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

export function toApiKey(doc: ApiKeyDoc) {
  return {
    id: doc.id,
    object: "api_key" as const,
    workspace_id: doc.workspace_id,
    name: doc.name,
    scopes: doc.scopes,
    key_prefix: doc.key_prefix,
    created_at: doc.created_at.toISOString(),
    last_used_at: doc.last_used_at?.toISOString() ?? null,
    revoked_at: doc.revoked_at?.toISOString() ?? null,
  };
}

/**
 * API keys a secret scanner recognises (docs/decisions.md "API key format"): a fixed prefix, 43
 * base62 characters of 32 random bytes, and 6 base62 characters of the CRC32 of what precedes
 * them. A mistyped or truncated key fails the checksum and is refused without a database lookup.
 */
export const API_KEY_PREFIX = "dsk_";
/** The one regular expression a scanner needs (the README documents it). */
export const API_KEY_PATTERN = /\bdsk_[0-9A-Za-z]{49}\b/;
const RANDOM_CHARS = 43;
const CHECKSUM_CHARS = 6;
const CURRENT_FORMAT = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${RANDOM_CHARS + CHECKSUM_CHARS}}$`);
/** Keys issued before the checksum: `dk_` + 32 random bytes, base64url. They keep working. */
const LEGACY_FORMAT = /^dk_[0-9A-Za-z_-]{43}$/;

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

function base62(value: bigint, width: number): string {
  let text = "";
  for (let n = value; n > 0n; n /= 62n) text = BASE62[Number(n % 62n)] + text;
  return text.padStart(width, "0");
}

const checksum = (body: string) => base62(BigInt(crc32(body)), CHECKSUM_CHARS);

/** A new key's plaintext: prefix, 32 random bytes in base62, checksum. */
export function newApiKeyText(): string {
  const body = API_KEY_PREFIX + base62(BigInt(`0x${randomBytes(32).toString("hex")}`), RANDOM_CHARS);
  return body + checksum(body);
}

/** Could this be a key we issued? Pure: the checksum of a current key, the shape of a legacy one. */
export function isWellFormedApiKey(key: string): boolean {
  if (CURRENT_FORMAT.test(key)) return checksum(key.slice(0, -CHECKSUM_CHARS)) === key.slice(-CHECKSUM_CHARS);
  return LEGACY_FORMAT.test(key);
}

/** The characters `key_prefix` shows: the first 8 after the prefix (`dsk_`, or `dk_` for legacy keys). */
const keyPrefixOf = (key: string) => key.slice(key.indexOf("_") + 1, key.indexOf("_") + 9);

// Recording every use would turn each read into a write; once a minute is enough to tell
// whether a key is still in use.
const LAST_USED_RESOLUTION_MS = 60_000;

// Bounds the memory of the lookup cache: far more keys than one process serves at once, and a
// flood of made-up keys can only push real ones out (they are then looked up again), not grow it.
const CACHED_KEYS = 10_000;

export class ApiKeys {
  private readonly collection: Collection<ApiKeyDoc>;
  /**
   * Every request authenticates, and at thousands of requests a second the key lookup would be
   * half of a GET's database work. So a process keeps what it looked up for `cacheMs`
   * (API_KEY_CACHE_MS), keyed by the key's hash; concurrent lookups of one key share one query.
   * A revocation evicts the key here at once; other processes notice within `cacheMs`.
   */
  private readonly lookups: CachedReads<ApiKeyDoc | null>;

  constructor(db: Db, options: { cacheMs?: number } = {}) {
    this.collection = db.collection<ApiKeyDoc>("api_keys");
    this.lookups = new CachedReads((hash) => this.collection.findOne({ _id: hash }), {
      ttlMs: options.cacheMs ?? 0,
      max: CACHED_KEYS,
    });
  }

  async ensureIndexes(): Promise<void> {
    // Unique per workspace, the workspace first, as every unique index (docs/operations.md,
    // "Indexes"); it also serves the workspace's list, newest first. The admin API revokes a key
    // by its id alone, hence the plain index on `id`.
    await this.collection.createIndexes([
      { key: { workspace_id: 1, id: -1 }, unique: true, name: "workspace_newest_unique" },
      { key: { id: 1 }, name: "public_id" },
    ]);
  }

  /** Issues a key (`newApiKeyText`). Returns the plaintext once. */
  async create(workspaceId: string, name: string, scopes: Scope[]): Promise<{ doc: ApiKeyDoc; key: string }> {
    const key = newApiKeyText();
    const doc: ApiKeyDoc = {
      _id: hashToken(key),
      id: newId("key"),
      workspace_id: workspaceId,
      name,
      scopes: [...new Set(scopes)],
      key_prefix: keyPrefixOf(key),
      created_at: new Date(),
      last_used_at: null,
      revoked_at: null,
    };
    await this.collection.insertOne(doc);
    return { doc, key };
  }

  /**
   * The live (not revoked) key with this plaintext, if any. A key that is not well formed (a
   * wrong checksum: mistyped, truncated, made up) is answered without asking the database.
   */
  async authenticate(key: string): Promise<ApiKeyDoc | null> {
    if (!isWellFormedApiKey(key)) return null;
    const hash = hashToken(key);
    const doc = await this.lookups.get(hash);
    if (!doc || doc.revoked_at) return null;
    const now = new Date();
    if (!doc.last_used_at || now.getTime() - doc.last_used_at.getTime() > LAST_USED_RESOLUTION_MS) {
      // Noted on the (possibly cached) document too, so the next requests do not write again.
      doc.last_used_at = now;
      // Fire and forget: a failed bookkeeping write must not fail the request.
      this.collection.updateOne({ _id: doc._id }, { $set: { last_used_at: now } }).catch(() => {});
    }
    return doc;
  }

  /** The key with this plaintext, revoked or not (admin introspection); one `_id` probe. */
  async findByPlaintext(key: string): Promise<ApiKeyDoc | null> {
    if (!isWellFormedApiKey(key)) return null;
    return this.collection.findOne({ _id: hashToken(key) });
  }

  async list(workspaceId: string): Promise<ApiKeyDoc[]> {
    return this.collection.find({ workspace_id: workspaceId }).sort({ id: -1 }).limit(1000).toArray();
  }

  /** Revokes at once; revoking again keeps the first revocation time. */
  async revoke(id: string): Promise<ApiKeyDoc | null> {
    // Conditional: of two racing revocations one sets the time, the other finds it set.
    const revoked = await this.collection.findOneAndUpdate(
      { id, revoked_at: null },
      { $set: { revoked_at: new Date() } },
      { returnDocument: "after" },
    );
    const doc = revoked ?? (await this.collection.findOne({ id }));
    if (doc) this.lookups.drop(doc._id);
    return doc;
  }
}
