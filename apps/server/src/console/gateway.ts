import type { Context, Middleware } from "koa";
import { AppError } from "../platform/errors.js";
import type { AuthenticatedKey } from "../platform/http/auth.js";
import { sameToken } from "../platform/token-hash.js";
import type { SessionCookie } from "./session-cookie.js";
import { CONSOLE_SCOPES, type ConsoleSessions, type LiveSession } from "./sessions.js";

/**
 * The console's way into the public API (docs/console.md, "One contract"): a request to
 * `/console/api/v1/<path>` is the request `/open/v1/<path>`, made by the session's workspace
 * with the session's scopes. The gateway authenticates the cookie, checks the CSRF header of a
 * state-changing request, hands the route kit a key (`ctx.state.consoleKey`, read by
 * platform/http/auth.ts) and rewrites the path; the public routes do the rest, validation,
 * rate limit and answers included, so the console can do nothing the API cannot.
 */

export const API_PREFIX = "/console/api/v1/";
export const CSRF_HEADER = "X-CSRF-Token";
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** The live session of this request's cookie; 401 without one. */
export async function requireSession(
  ctx: Context,
  sessions: ConsoleSessions,
  cookie: SessionCookie,
): Promise<LiveSession> {
  const token = cookie.read(ctx);
  if (!token) {
    throw new AppError(401, "missing_api_key", "No console session: open the console with a new link.");
  }
  const session = await sessions.authenticate(token);
  if (!session) {
    throw new AppError(
      401,
      "invalid_api_key",
      "The console session has ended: open the console with a new link.",
    );
  }
  return session;
}

function assertCsrf(ctx: Context, session: LiveSession): void {
  if (!sameToken(ctx.get(CSRF_HEADER), session.csrf_token)) {
    // 403, not 401: the session is good, the request is not one the console's page made.
    throw new AppError(
      403,
      "csrf_token_invalid",
      `A console request that changes something must carry its session's ${CSRF_HEADER} header.`,
    );
  }
}

export function consoleApiGateway(sessions: ConsoleSessions, cookie: SessionCookie): Middleware {
  return async (ctx, next) => {
    if (!ctx.path.startsWith(API_PREFIX)) return next();
    const session = await requireSession(ctx, sessions, cookie);
    if (!SAFE_METHODS.has(ctx.method)) assertCsrf(ctx, session);
    const key: AuthenticatedKey = {
      id: session.id,
      workspace_id: session.workspace_id,
      scopes: CONSOLE_SCOPES,
    };
    ctx.state.consoleKey = key;
    ctx.path = `/open/v1/${ctx.path.slice(API_PREFIX.length)}`;
    // Answers carry data of one person's session: never kept by a shared cache.
    ctx.set("Cache-Control", "no-store");
    return next();
  };
}
