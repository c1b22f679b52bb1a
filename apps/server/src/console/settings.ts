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

/**
 * CONSOLE_PUBLIC_URL: where browsers reach this server (a proxy's address, with any path it
 * mounts the server under), kept without a trailing slash; console links start with it.
 */
function publicUrl(raw: string): string {
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (!url || !/^https?:$/.test(url.protocol) || url.search || url.hash || url.username || url.password) {
    throw new ConfigError(
      `CONSOLE_PUBLIC_URL takes an http(s) URL without query, fragment or credentials, like https://support.example.com, got ${JSON.stringify(raw)}`,
    );
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, "");
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
  consolePublicUrl: custom("CONSOLE_PUBLIC_URL", {
    accepts: "an http(s) URL",
    defaultDoc: "unset",
    read: publicUrl,
    doc: "where browsers reach this server, e.g. a proxy's `https://support.example.com` (a path prefix is kept); console links (`createConsoleSession`) start with it, and an https one makes the session cookie `Secure` (`__Secure-deskline_console`). Unset, a link starts with the scheme and host the request came in by, and is minted only when that host is this machine (`localhost`, `127.0.0.1`, `[::1]`): any other `Host` is `409 console_public_url_required`",
  }),
});
export type ConsoleSettings = ReturnType<typeof consoleSettings.read>;
