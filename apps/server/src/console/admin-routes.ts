import type { RouteKit } from "../platform/http/route-kit.js";
import { assertWorkspace } from "../workspaces/admin-routes.js";
import type { Workspaces } from "../workspaces/workspaces.js";
import type { ConsoleSessions } from "./sessions.js";
import type { ConsoleSettings } from "./settings.js";

/**
 * The operator's door to the console: a one-time link for one workspace (docs/console.md). The
 * link starts with CONSOLE_PUBLIC_URL, or else with the scheme and host the operator reached this
 * server by (a Host header is the client's word: behind a proxy, set the URL); its token rides in
 * the fragment, which browsers never send to a server, so it reaches no access log or Referer.
 */
export function adminConsoleRoutes({
  op,
  store,
  config,
}: RouteKit<{ workspaces: Workspaces; consoleSessions: ConsoleSessions }, ConsoleSettings>): void {
  op("createConsoleSession", async ({ ctx, id, body }) => {
    await assertWorkspace(store.workspaces, id);
    const ttlMs = body.expires_in === undefined ? config.consoleSessionTtlMs : body.expires_in * 1000;
    const minted = await store.consoleSessions.mint(id, ttlMs);
    return {
      status: 201,
      body: {
        object: "console_session",
        workspace_id: id,
        url: consoleLink(config.consolePublicUrl ?? `${ctx.protocol}://${ctx.host}`, minted.linkToken),
        link_expires_at: minted.linkExpiresAt.toISOString(),
        expires_at: minted.expiresAt.toISOString(),
      },
    };
  });
}

export const consoleLink = (origin: string, linkToken: string): string =>
  `${origin}/console/#token=${linkToken}`;
