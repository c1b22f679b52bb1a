import { keepOutOfReplay } from "../platform/http/idempotency.js";
import type { RouteKit } from "../platform/http/route-kit.js";
import { assertWorkspace } from "../workspaces/admin-routes.js";
import type { Workspaces } from "../workspaces/workspaces.js";
import { linkOrigin } from "./link-origin.js";
import type { ConsoleSessions } from "./sessions.js";
import type { ConsoleSettings } from "./settings.js";

/**
 * The operator's door to the console: a one-time link for one workspace (docs/console.md). The
 * link starts with `linkOrigin` (console/link-origin.ts); its token rides in the fragment, which
 * browsers never send to a server, so it reaches no access log or Referer.
 */
export function adminConsoleRoutes({
  op,
  store,
  config,
}: RouteKit<{ workspaces: Workspaces; consoleSessions: ConsoleSessions }, ConsoleSettings>): void {
  op("createConsoleSession", async ({ ctx, id, body }) => {
    await assertWorkspace(store.workspaces, id);
    const ttlMs = body.expires_in === undefined ? config.consoleSessionTtlMs : body.expires_in * 1000;
    const origin = linkOrigin(ctx, config);
    const minted = await store.consoleSessions.mint(id, ttlMs);
    keepOutOfReplay(ctx, LINK_NOT_KEPT);
    return {
      status: 201,
      body: {
        object: "console_session",
        workspace_id: id,
        url: consoleLink(origin, minted.linkToken),
        link_expires_at: minted.linkExpiresAt.toISOString(),
        expires_at: minted.expiresAt.toISOString(),
      },
    };
  });
}

/**
 * A link's token is never stored, sealed or not (docs/decisions.md "Keys and secrets in stored
 * answers"): a replay of the minting is refused, and the caller mints another.
 */
export const LINK_NOT_KEPT = {
  fields: ["url"],
  advice:
    "its answer carried a one-time console link, which this server never keeps. Mint another link; " +
    "one that was never opened stops working when its link_expires_at passes.",
} as const;

export const consoleLink = (origin: string, linkToken: string): string =>
  `${origin}/console/#token=${linkToken}`;
