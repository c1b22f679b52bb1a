import type { Context } from "koa";
import type { ConsoleSettings } from "./settings.js";

/**
 * The console's session cookie (docs/console.md, "Sessions"): HttpOnly (no script reads it),
 * scoped to `/console/` (under CONSOLE_PUBLIC_URL's path, where a proxy mounts the server; the
 * API under `/open/v1` never sees it), and SameSite=Strict, so no
 * other site's page can make a browser send it. A console embedded by another site
 * (CONSOLE_FRAME_ANCESTORS) is a third-party context where a Strict cookie is never sent: there
 * it is SameSite=None and Partitioned (kept apart per embedding site), and the CSRF token is what
 * stops forged requests.
 *
 * Over https it is `Secure` and named with the `__Secure-` prefix, which browsers accept only from
 * a secure origin with `Secure` set, so no plain-http page of the host can plant or overwrite it.
 * Not `__Host-`: that prefix needs `Path=/`, which would send the session to every path of the
 * host, the API and whatever a proxy mounts beside the server included (docs/decisions.md
 * "Webhook console"). "Over https" is CONSOLE_PUBLIC_URL's scheme, or a request that came over
 * TLS to this server itself: the server trusts no proxy's `X-Forwarded-Proto` (Koa's `proxy` is
 * off), so behind a proxy that ends TLS the public URL is what says so. Written by hand: Koa's
 * cookie writer refuses `Secure` on a request it did not see come over TLS.
 */

const NAME = "deskline_console";
const SECURE_NAME = `__Secure-${NAME}`;
export const COOKIE_PATH = "/console/";

/** The cookie's path as browsers see it: under CONSOLE_PUBLIC_URL's path, if it has one. */
const cookiePath = (publicUrl: string | undefined): string =>
  `${publicUrl ? new URL(publicUrl).pathname.replace(/\/+$/, "") : ""}${COOKIE_PATH}`;

export interface SessionCookie {
  set(ctx: Context, token: string, expiresAt: Date): void;
  clear(ctx: Context): void;
  read(ctx: Context): string | undefined;
}

type CookieSettings = Pick<ConsoleSettings, "consoleFrameAncestors" | "consolePublicUrl">;

/** The session cookie as this server's settings make it. */
export function sessionCookie(config: CookieSettings): SessionCookie {
  // A framed console is a third-party context: only a SameSite=None cookie reaches it, and
  // browsers take one only when it is Secure.
  const embeddable = config.consoleFrameAncestors.length > 0;
  const publicHttps = config.consolePublicUrl?.startsWith("https:") === true;
  const secure = (ctx: Context) => embeddable || publicHttps || ctx.protocol === "https";
  const nameFor = (ctx: Context) => (secure(ctx) ? SECURE_NAME : NAME);
  const path = cookiePath(config.consolePublicUrl);
  const attributes = (ctx: Context) => [
    `Path=${path}`,
    "HttpOnly",
    ...(secure(ctx) ? ["Secure"] : []),
    ...(embeddable ? ["SameSite=None", "Partitioned"] : ["SameSite=Strict"]),
  ];
  return {
    set(ctx, token, expiresAt) {
      const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000));
      const cookie = [`${nameFor(ctx)}=${token}`, `Max-Age=${maxAge}`, ...attributes(ctx)];
      ctx.append("Set-Cookie", cookie.join("; "));
    },
    clear(ctx) {
      ctx.append("Set-Cookie", [`${nameFor(ctx)}=`, "Max-Age=0", ...attributes(ctx)].join("; "));
    },
    read: (ctx) => ctx.cookies.get(nameFor(ctx)),
  };
}
