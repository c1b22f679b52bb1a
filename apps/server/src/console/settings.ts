/** The webhook console's sessions and who may embed it (docs/console.md). */

import { ConfigError, custom, integer, settingGroup } from "../platform/settings.js";

/** CONSOLE_FRAME_ANCESTORS: origins only (scheme, host, port), as CSP's frame-ancestors takes them. */
function frameAncestors(raw: string): string[] {
  return raw
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((item) => {
      const origin = URL.canParse(item) ? new URL(item).origin : "null";
      if (origin === "null" || origin !== item.replace(/\/$/, "") || !/^https?:/.test(origin)) {
        throw new ConfigError(
          `CONSOLE_FRAME_ANCESTORS takes origins like https://app.example.com, got ${JSON.stringify(item)}`,
        );
      }
      return origin;
    });
}

export const consoleSettings = settingGroup({
  consoleSessionTtlMs: integer("CONSOLE_SESSION_TTL_MINUTES", {
    default: 60,
    min: 1,
    times: 60_000,
    doc: "how long a webhook console session lasts when its minting (`createConsoleSession`) names no `expires_in`. See [docs/console.md](console.md)",
  }),
  consoleFrameAncestors: custom("CONSOLE_FRAME_ANCESTORS", {
    accepts: "origins, space- or comma-separated",
    unset: "",
    defaultDoc: "unset",
    read: frameAncestors,
    doc: "origins (`https://app.example.com`, space- or comma-separated) whose pages may embed the webhook console in an iframe; unset, none may. Set, the session cookie is `SameSite=None; Secure; Partitioned`, so the console must be served over HTTPS",
  }),
});
export type ConsoleSettings = ReturnType<typeof consoleSettings.read>;
