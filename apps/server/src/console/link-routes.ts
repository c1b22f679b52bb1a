import type { Context } from "koa";
import { AppError, notFound } from "../platform/errors.js";
import { apiKeyOf } from "../platform/http/auth.js";
import { keepOutOfReplay } from "../platform/http/idempotency.js";
import type { RouteKit } from "../platform/http/route-kit.js";
import { workspaceOf } from "../platform/http/route-kit.js";
import { assertWorkspace } from "../workspaces/admin-routes.js";
import type { Workspaces } from "../workspaces/workspaces.js";
import { linkOrigin } from "./link-origin.js";
import { type ConsoleSessionDoc, type ConsoleSessions, SESSION_ID_PREFIX } from "./sessions.js";
import type { ConsoleSettings } from "./settings.js";

/**
 * The doors to the console (docs/console.md, "Opening it"): a one-time link for one workspace,
 * minted by the operator (`createConsoleSession`, admin token) or by the workspace's own API key
 * with `webhooks:manage` (`createConsoleLink`); and the operator's list and revoke of sessions.
 * The link starts with `linkOrigin` (console/link-origin.ts); its token rides in the fragment,
 * which browsers never send to a server, so it reaches no access log or Referer.
 */

type Kit = RouteKit<{ workspaces: Workspaces; consoleSessions: ConsoleSessions }, ConsoleSettings>;

/** How many live sessions `listConsoleSessions` shows (sessions last a day at most). */
const LISTED = 100;

export function consoleLinkRoutes(kit: Kit): void {
  const { op, store } = kit;
  op("createConsoleSession", async ({ ctx, id, body }) => {
    await assertWorkspace(store.workspaces, id);
    return { status: 201, body: await mintLink(kit, ctx, id, body.expires_in) };
  });

  op("createConsoleLink", async ({ ctx, body }) => {
    // A session minting sessions would outlive its own end, one link at a time.
    if (apiKeyOf(ctx).id.startsWith(SESSION_ID_PREFIX)) {
      throw new AppError(
        403,
        "insufficient_scope",
        "A console session cannot make console links: ask with an API key that has the `webhooks:manage` scope.",
      );
    }
    return { status: 201, body: await mintLink(kit, ctx, workspaceOf(ctx), body.expires_in) };
  });

  op("listConsoleSessions", async ({ id }) => {
    await assertWorkspace(store.workspaces, id);
    const { docs, hasMore } = await store.consoleSessions.listLive(id, LISTED);
    return { status: 200, body: { object: "list", data: docs.map(toRecord), has_more: hasMore } };
  });

  op("revokeConsoleSession", async ({ id }) => {
    const doc = await store.consoleSessions.revoke(id);
    if (!doc) throw notFound("console session", id);
    return { status: 200, body: toRecord(doc) };
  });
}

/** A new session of `workspaceId` and the answer that carries its link (never kept for a replay). */
async function mintLink({ store, config }: Kit, ctx: Context, workspaceId: string, expiresIn?: number) {
  const ttlMs = expiresIn === undefined ? config.consoleSessionTtlMs : expiresIn * 1000;
  const origin = linkOrigin(ctx, config);
  const minted = await store.consoleSessions.mint(workspaceId, ttlMs);
  keepOutOfReplay(ctx, LINK_NOT_KEPT);
  return {
    object: "console_session" as const,
    workspace_id: workspaceId,
    url: consoleLink(origin, minted.linkToken),
    link_expires_at: minted.linkExpiresAt.toISOString(),
    expires_at: minted.expiresAt.toISOString(),
  };
}

const toRecord = (doc: ConsoleSessionDoc) => ({
  id: SESSION_ID_PREFIX + doc._id,
  object: "console_session" as const,
  workspace_id: doc.workspace_id,
  created_at: doc.created_at.toISOString(),
  link_expires_at: doc.link_expires_at.toISOString(),
  opened_at: doc.exchanged_at?.toISOString() ?? null,
  expires_at: doc.expires_at.toISOString(),
});

/**
 * A link's token is never stored, sealed or not (docs/decisions.md "Keys and secrets in stored
 * answers"): a replay of the minting is refused, and the caller mints another.
 */
export const LINK_NOT_KEPT = {
  fields: ["url"],
  advice:
    "its answer carried a one-time console link, which this server never keeps. Ask for another link; " +
    "one that was never opened stops working when its link_expires_at passes.",
} as const;

export const consoleLink = (origin: string, linkToken: string): string =>
  `${origin}/console/#token=${linkToken}`;
