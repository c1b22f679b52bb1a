import type { Context } from "koa";

/**
 * The console's session cookie (docs/console.md, "Sessions"): HttpOnly (no script reads it),
 * scoped to `/console/` (the API under `/open/v1` never sees it), and SameSite=Strict, so no
 * other site's page can make a browser send it. A console embedded by another site
 * (CONSOLE_FRAME_ANCESTORS) is a third-party context where a Strict cookie is never sent: there
 * it is SameSite=None, Secure and Partitioned (kept apart per embedding site), and the CSRF
 * token is what stops forged requests. Written by hand: Koa's cookie writer refuses `Secure`
 * behind a proxy that terminates TLS unless the app trusts proxy headers, which this one does not.
 */

export const COOKIE_NAME = "deskline_console";
export const COOKIE_PATH = "/console/";

export function setSessionCookie(ctx: Context, token: string, expiresAt: Date, embeddable: boolean): void {
  const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000));
  const attributes = [`${COOKIE_NAME}=${token}`, `Path=${COOKIE_PATH}`, `Max-Age=${maxAge}`, "HttpOnly"];
  attributes.push(...(embeddable ? ["SameSite=None", "Secure", "Partitioned"] : ["SameSite=Strict"]));
  ctx.append("Set-Cookie", attributes.join("; "));
}

export function clearSessionCookie(ctx: Context): void {
  ctx.append("Set-Cookie", `${COOKIE_NAME}=; Path=${COOKIE_PATH}; Max-Age=0; HttpOnly; SameSite=Strict`);
}

export const sessionCookie = (ctx: Context): string | undefined => ctx.cookies.get(COOKIE_NAME);
