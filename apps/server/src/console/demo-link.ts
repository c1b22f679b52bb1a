import { consoleLink } from "./link-routes.js";
import type { ConsoleSessions } from "./sessions.js";
import type { ConsoleSettings } from "./settings.js";

/** `pnpm start`'s console link for the demo workspace: a session of the default length, as the admin API mints one. */
export async function demoConsoleLink(
  store: { consoleSessions: ConsoleSessions },
  workspaceId: string,
  baseUrl: string,
  config: Pick<ConsoleSettings, "consoleSessionTtlMs" | "consolePublicUrl">,
): Promise<string> {
  const { linkToken } = await store.consoleSessions.mint(workspaceId, config.consoleSessionTtlMs);
  return consoleLink(config.consolePublicUrl ?? baseUrl, linkToken);
}
