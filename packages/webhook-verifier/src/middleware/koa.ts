// `@deskline/webhook-verifier/koa`. Typed structurally so that koa stays out of the dependencies.
import type { IncomingMessage } from "node:http";
import type { WebhookSecret } from "../core.js";
import { WebhookVerificationError } from "../errors.js";
import type { DesklineEvent } from "../event.js";
import { constructEvent } from "../verify.js";
import { payloadOf } from "./node-body.js";
import type { WebhookMiddlewareOptions } from "./shared.js";
import { errorBody, errorStatus, maxBodyBytes, SIGNATURE_HEADER } from "./shared.js";

/** The part of a Koa context the middleware uses; a Koa 2 or 3 `ctx` satisfies it. */
export interface KoaWebhookContext {
  req: IncomingMessage;
  // `req` is never read here: it names a member every Koa request has, so that TypeScript does not
  // refuse a real ctx for sharing no property with this otherwise all-optional type.
  request: { req: IncomingMessage; rawBody?: unknown; body?: unknown };
  // biome-ignore lint/suspicious/noExplicitAny: Koa's own DefaultState is `any`; narrower would reject apps with typed state.
  state: any;
  status: number;
  body: unknown;
}

/** Options of {@link koaWebhookMiddleware}. */
export interface KoaWebhookOptions<Ctx extends KoaWebhookContext = KoaWebhookContext>
  extends WebhookMiddlewareOptions {
  /**
   * Handles the verified event instead of the downstream middlewares (`next` is then not called).
   * When it leaves `ctx.body` unset the delivery is answered 200 `{"received":true}`.
   */
  handler?: (event: DesklineEvent, ctx: Ctx) => unknown;
}

/**
 * Koa middleware that verifies a Deskline delivery, then puts the event on
 * `ctx.state.webhookEvent` and calls `next()` (or `options.handler`). A failed verification is
 * answered 400 (413 for a body over `maxBodyBytes`) with a JSON error body.
 *
 * Uses `ctx.request.rawBody` (koa-bodyparser) or a Buffer `ctx.request.body` when a body parser
 * already ran; otherwise reads the request stream itself.
 *
 * @param secret The endpoint's `whsec_…` secret, or several during a rotation.
 * @param options Handler, body cap, tolerance and clock.
 */
export function koaWebhookMiddleware<Ctx extends KoaWebhookContext = KoaWebhookContext>(
  secret: WebhookSecret,
  options?: KoaWebhookOptions<Ctx>,
): (ctx: Ctx, next: () => Promise<unknown>) => Promise<void> {
  const max = maxBodyBytes(options);
  const handler = options?.handler;
  return async (ctx, next) => {
    let event: DesklineEvent;
    try {
      const payload = await payloadOf(ctx.req, ctx.request, max);
      event = constructEvent(
        payload,
        ctx.req.headers[SIGNATURE_HEADER] as string | undefined,
        secret,
        options,
      );
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      ctx.status = errorStatus(error);
      ctx.body = errorBody(error);
      return;
    }
    ctx.state.webhookEvent = event;
    if (handler === undefined) {
      await next();
      return;
    }
    await handler(event, ctx);
    if (ctx.body === undefined || ctx.body === null) ctx.body = { received: true };
  };
}
