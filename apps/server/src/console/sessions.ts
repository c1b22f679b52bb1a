import { randomBytes } from "node:crypto";
import type { Collection, Db } from "mongodb";
import { deleteInBatches } from "../platform/database/batch-delete.js";
import { hashToken } from "../platform/token-hash.js";
import type { Scope } from "../workspaces/api-keys.js";

/**
 * Sessions of the webhook console (docs/console.md): an operator mints one for a workspace and
 * gets a one-time link; the console exchanges the link's token for a session token kept in an
 * HttpOnly cookie. Both tokens are 32 random bytes shown once and stored only as SHA-256 hashes,
 * as API keys are. Expiry is checked at every read, and an expired session is removed: on MongoDB
 * by its TTL index within a minute, and everywhere (the embedded fallback database never runs a
 * TTL index) by the hourly sweep (docs/operations.md "Retention").
 */

/**
 * What a console session may do, in its workspace only: exactly what the console's pages call,
 * which is endpoints, deliveries, events and recoveries (docs/decisions.md "Webhook console").
 * Not the read scopes: the console shows no contact, ticket or conversation, and a session that
 * could read them would be a way into them that no page needs.
 */
export const CONSOLE_SCOPES: readonly Scope[] = ["webhooks:manage"];

/** How long a link stays usable, at most: long enough to open it, short enough to lose nothing if it leaks later. */
export const LINK_TTL_MS = 10 * 60_000;

export interface ConsoleSessionDoc {
  /** A random, non-secret id. */
  _id: string;
  /**
   * SHA-256 (hex) of the session token the cookie carries. The token is made when the link is
   * exchanged; until then this is the hash of a token nobody holds (a unique index wants a value).
   */
  session_hash: string;
  workspace_id: string;
  /** SHA-256 (hex) of the link's one-time token. */
  link_hash: string;
  /** Sent by the page on every state-changing request (docs/console.md, "Cross-site requests"). */
  csrf_token: string;
  link_expires_at: Date;
  expires_at: Date;
  /** When the link was exchanged; null until then, and the link works only while it is null. */
  exchanged_at: Date | null;
  created_at: Date;
}

/** A session as a request sees it: enough to act as an API key of the workspace. */
export interface LiveSession {
  /** A stable, non-secret id (rate limiting and logs name the session by it). */
  id: string;
  workspace_id: string;
  csrf_token: string;
  expires_at: Date;
}

const LINK_PREFIX = "cst_";
const SESSION_PREFIX = "css_";
const token = (prefix: string) => prefix + randomBytes(32).toString("base64url");

/** A session's public id (the admin API's, logs', rate limits'): `cs_` and its random `_id`. */
export const SESSION_ID_PREFIX = "cs_";

const live = (doc: ConsoleSessionDoc): LiveSession => ({
  id: SESSION_ID_PREFIX + doc._id,
  workspace_id: doc.workspace_id,
  csrf_token: doc.csrf_token,
  expires_at: doc.expires_at,
});

/** Not ended: a link still to be opened, or an open session, before its end. */
const liveAt = (now: Date) => ({
  expires_at: { $gt: now },
  $or: [{ exchanged_at: { $ne: null } }, { link_expires_at: { $gt: now } }],
});

export class ConsoleSessions {
  private readonly collection: Collection<ConsoleSessionDoc>;

  constructor(db: Db) {
    this.collection = db.collection<ConsoleSessionDoc>("console_sessions");
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndexes([
      { key: { link_hash: 1 }, name: "link", unique: true },
      { key: { session_hash: 1 }, name: "session", unique: true },
      // Real MongoDB removes expired sessions itself; elsewhere the sweep does (see the module comment).
      { key: { expires_at: 1 }, name: "expiry", expireAfterSeconds: 0 },
    ]);
  }

  /** A new session for `workspaceId`, lasting `ttlMs`; answers the link token (shown once). */
  async mint(
    workspaceId: string,
    ttlMs: number,
    now = new Date(),
  ): Promise<{ linkToken: string; linkExpiresAt: Date; expiresAt: Date }> {
    const linkToken = token(LINK_PREFIX);
    const expiresAt = new Date(now.getTime() + ttlMs);
    const linkExpiresAt = new Date(Math.min(now.getTime() + LINK_TTL_MS, expiresAt.getTime()));
    await this.collection.insertOne({
      _id: randomBytes(12).toString("base64url"),
      session_hash: hashToken(token(SESSION_PREFIX)),
      workspace_id: workspaceId,
      link_hash: hashToken(linkToken),
      csrf_token: randomBytes(24).toString("base64url"),
      link_expires_at: linkExpiresAt,
      expires_at: expiresAt,
      exchanged_at: null,
      created_at: now,
    });
    return { linkToken, linkExpiresAt, expiresAt };
  }

  /**
   * Spends a link: answers the session token for the cookie, or null when the link is unknown,
   * used, or expired. A conditional update, so two tabs racing with one link get one session.
   */
  async exchange(
    linkToken: string,
    now = new Date(),
  ): Promise<{ sessionToken: string; session: LiveSession } | null> {
    if (!linkToken.startsWith(LINK_PREFIX)) return null;
    const sessionToken = token(SESSION_PREFIX);
    const spent = await this.collection.findOneAndUpdate(
      { link_hash: hashToken(linkToken), exchanged_at: null, link_expires_at: { $gt: now } },
      { $set: { exchanged_at: now, session_hash: hashToken(sessionToken) } },
      { returnDocument: "after" },
    );
    return spent ? { sessionToken, session: live(spent) } : null;
  }

  /** The live session a cookie's token stands for, or null (unknown, never exchanged, expired). */
  async authenticate(sessionToken: string, now = new Date()): Promise<LiveSession | null> {
    if (!sessionToken.startsWith(SESSION_PREFIX)) return null;
    const doc = await this.collection.findOne({
      session_hash: hashToken(sessionToken),
      exchanged_at: { $ne: null },
      expires_at: { $gt: now },
    });
    return doc ? live(doc) : null;
  }

  /** Removes the sessions ended by `now` (expired), in batches; returns how many went. */
  sweep(now = new Date()): Promise<number> {
    return deleteInBatches(this.collection, { expires_at: { $lte: now } });
  }

  /** Ends a session now (the console's "Sign out"). */
  async end(sessionToken: string): Promise<void> {
    await this.collection.deleteOne({ session_hash: hashToken(sessionToken) });
  }

  /** The workspace's sessions that have not ended, newest first: at most `limit`, and whether there are more. */
  async listLive(
    workspaceId: string,
    limit: number,
    now = new Date(),
  ): Promise<{ docs: ConsoleSessionDoc[]; hasMore: boolean }> {
    const docs = await this.collection
      .find({ workspace_id: workspaceId, ...liveAt(now) })
      .sort({ created_at: -1, _id: -1 })
      .limit(limit + 1)
      .toArray();
    return { docs: docs.slice(0, limit), hasMore: docs.length > limit };
  }

  /** Ends the live session of public id `id` (`cs_…`) now; answers it as it was, or null when there is none. */
  async revoke(id: string, now = new Date()): Promise<ConsoleSessionDoc | null> {
    if (!id.startsWith(SESSION_ID_PREFIX)) return null;
    return this.collection.findOneAndDelete({ _id: id.slice(SESSION_ID_PREFIX.length), ...liveAt(now) });
  }
}
