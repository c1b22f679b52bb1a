import { Router } from "@koa/router";
import type { Context, Middleware } from "koa";
import { AppError } from "../platform/errors.js";
import { type BodyBounds, readJsonBody } from "../platform/http/body.js";
import type { Before } from "../platform/http/serve.js";
import { once, sendAsset } from "../platform/http/static-asset.js";
import { loadConsoleAssets } from "./assets.js";
import { consoleApiGateway, requireSession } from "./gateway.js";
import { consoleHeaders, consolePage } from "./page.js";
import { type SessionCookie, sessionCookie } from "./session-cookie.js";
import type { ConsoleSessions, LiveSession } from "./sessions.js";
import type { ConsoleSettings } from "./settings.js";

/**
 * The webhook console under `/console/` (docs/console.md): its page and files, the session
 * (exchange a link, read it, end it), and the gateway into the public API. Not operations of a
 * spec: the console is a client of the public API, and these paths only carry it there.
 */

const sessionBody = (session: LiveSession) => ({
  object: "console_session",
  workspace_id: session.workspace_id,
  csrf_token: session.csrf_token,
  expires_at: session.expires_at.toISOString(),
});

export function consoleMiddleware(
  sessions: ConsoleSessions,
  config: Pick<ConsoleSettings, "consoleFrameAncestors" | "consolePublicUrl">,
): Before[] {
  const frameAncestors = config.consoleFrameAncestors;
  const cookie = sessionCookie(config);
  const headers = consoleHeaders(frameAncestors);
  const assets = once(() => loadConsoleAssets());
  const router = new Router({ prefix: "/console" });

  const page = once(async () =>
    consolePage([...(await assets()).keys()].filter((name) => name.endsWith(".js") && name !== "app.js")),
  );
  router.get("/", async (ctx) => {
    // Relative, so a proxy's path prefix stays: `…/console` → `…/console/`.
    if (!ctx.path.endsWith("/")) return ctx.redirect("console/");
    ctx.set({ ...headers, "Cache-Control": "no-cache" });
    ctx.type = "text/html";
    ctx.body = await page();
  });

  router.get("/assets/:name", async (ctx, next) => {
    const asset = (await assets()).get(ctx.params.name ?? "");
    if (!asset) return next();
    ctx.set(headers);
    sendAsset(ctx, asset, "no-cache");
  });

  router.post("/session", exchangeLink(sessions, cookie));
  router.get("/session", async (ctx) =>
    respond(ctx, sessionBody(await requireSession(ctx, sessions, cookie))),
  );

  router.delete("/session", async (ctx) => {
    const session = await requireSession(ctx, sessions, cookie);
    await sessions.end(cookie.read(ctx) as string);
    cookie.clear(ctx);
    respond(ctx, { ...sessionBody(session), csrf_token: undefined, ended: true });
  });

  return [router.routes(), consoleApiGateway(sessions, cookie)];
}

/**
 * What the exchange takes: `{"token": "cst_…"}` is under 60 bytes and one level deep. The route
 * needs no login, so it takes no more than that (docs/decisions.md "Bounded JSON bodies"): 1 KiB
 * and one level, where the API's operations take 1 MiB.
 */
const SESSION_BODY: BodyBounds = { bytes: 1024, depth: 1 };

/**
 * `POST /console/session`: a link's one-time token exchanged for the session cookie. The token
 * comes in a JSON body: a cross-site form cannot send JSON, and a cross-site script's fetch with
 * this content type needs a preflight this server never grants.
 */
function exchangeLink(sessions: ConsoleSessions, cookie: SessionCookie): Middleware {
  return async (ctx) => {
    const body = (await readJsonBody(ctx, SESSION_BODY)) as { token?: unknown } | undefined;
    if (typeof body?.token !== "string") {
      throw new AppError(400, "parameter_missing", 'Send the link\'s token as `{"token": "cst_…"}`.', {
        param: "token",
      });
    }
    const exchanged = await sessions.exchange(body.token);
    if (!exchanged) {
      throw new AppError(
        401,
        "invalid_api_key",
        "This console link was already used or has expired: ask for a new one.",
        { param: "token" },
      );
    }
    cookie.set(ctx, exchanged.sessionToken, exchanged.session.expires_at);
    respond(ctx, sessionBody(exchanged.session));
  };
}

function respond(ctx: Context, body: unknown): void {
  ctx.set("Cache-Control", "no-store");
  ctx.body = body;
}
