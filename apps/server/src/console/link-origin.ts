import { isIP } from "node:net";
import type { Context } from "koa";
import { AppError } from "../platform/errors.js";
import type { ConsoleSettings } from "./settings.js";

/**
 * Where a console link starts (docs/console.md, "Opening it"): CONSOLE_PUBLIC_URL when it is set;
 * without it, the scheme and `Host` the request came by, but only when that host names this
 * machine. A `Host` header is the client's word: taken unchecked, `Host: evil.example` would
 * make the server hand out a link to evil.example carrying a live token. Loopback is where
 * `pnpm start` and a local operator reach the server; anywhere else, the operator says where
 * browsers reach it (docs/decisions.md "Webhook console").
 */
export function linkOrigin(ctx: Context, config: Pick<ConsoleSettings, "consolePublicUrl">): string {
  if (config.consolePublicUrl) return config.consolePublicUrl;
  if (isLoopbackHost(ctx.hostname)) return `${ctx.protocol}://${ctx.host}`;
  throw new AppError(
    409,
    "console_public_url_required",
    `This server has no CONSOLE_PUBLIC_URL, and the request's Host (${JSON.stringify(ctx.host.slice(0, 100))}) ` +
      "does not name this machine: a link built from it could lead anywhere. Set CONSOLE_PUBLIC_URL to " +
      "the address browsers open, or ask for the link through localhost.",
  );
}

/** `localhost`, a name under `.localhost` (RFC 6761), 127.0.0.0/8 or `[::1]`. */
export function isLoopbackHost(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, "");
  if (name === "localhost" || name.endsWith(".localhost")) return true;
  if (name === "[::1]") return true;
  return isIP(name) === 4 && name.startsWith("127.");
}
