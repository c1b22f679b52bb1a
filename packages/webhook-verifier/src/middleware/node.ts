// `@deskline/webhook-verifier/node`: for node `http`, Express, Connect and anything `(req, res, next)`.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { WebhookSecret } from "../core.js";
import { WebhookVerificationError } from "../errors.js";
import type { DesklineEvent } from "../event.js";
import { constructEvent } from "../verify.js";
import { payloadOf } from "./node-body.js";
import type { WebhookMiddlewareOptions } from "./shared.js";
import { errorBody, errorStatus, maxBodyBytes, SIGNATURE_HEADER } from "./shared.js";

/** A node request as the middleware sees it: raw bodies kept by parsers, and the event it adds. */
export interface NodeWebhookRequest extends IncomingMessage {
  /** A raw body some earlier middleware kept (Buffer or string). */
  rawBody?: unknown;
  /** express.raw() leaves the body here as a Buffer. */
  body?: unknown;
  /** Set by the middleware once the delivery is verified. */
  webhookEvent?: DesklineEvent;
}

/** Options of {@link nodeWebhookMiddleware}. */
export interface NodeWebhookOptions<
  Req extends NodeWebhookRequest = NodeWebhookRequest,
  Res extends ServerResponse = ServerResponse,
> extends WebhookMiddlewareOptions {
  /**
   * Handles the verified event instead of `next()`. When it has not answered by the time it
   * returns (or its promise settles), the delivery is answered 200 `{"received":true}`.
   */
  handler?: (event: DesklineEvent, req: Req, res: Res) => unknown;
  /**
   * Called with an error that is not a verification failure (the handler threw, the client
   * aborted) when there is no `next` to pass it to; the client then gets a 500. Default:
   * `console.error`.
   */
  onError?: (error: unknown, req: Req) => void;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader("content-type", "application/json; charset=utf-8");
  res.setHeader("content-length", Buffer.byteLength(text));
  res.end(text);
}

/**
 * Connect-style middleware that verifies a Deskline delivery, sets `req.webhookEvent` and calls
 * `next()` (or `options.handler`). A failed verification is answered 400 (413 for a body over
 * `maxBodyBytes`) with a JSON error body; other errors go to `next(error)`.
 *
 * Uses `req.rawBody` or a Buffer `req.body` (express.raw()) when a body parser already ran;
 * otherwise reads the request stream itself. Works as a plain `http.createServer` listener too.
 *
 * @param secret The endpoint's `whsec_…` secret, or several during a rotation.
 * @param options Handler, body cap, tolerance and clock.
 */
export function nodeWebhookMiddleware<
  Req extends NodeWebhookRequest = NodeWebhookRequest,
  Res extends ServerResponse = ServerResponse,
>(
  secret: WebhookSecret,
  options?: NodeWebhookOptions<Req, Res>,
): (req: Req, res: Res, next?: (error?: unknown) => void) => Promise<void> {
  const max = maxBodyBytes(options);
  const handler = options?.handler;
  return async (req, res, next) => {
    try {
      let event: DesklineEvent;
      try {
        const payload = await payloadOf(req, req, max);
        event = constructEvent(payload, req.headers[SIGNATURE_HEADER] as string | undefined, secret, options);
      } catch (error) {
        if (!(error instanceof WebhookVerificationError)) throw error;
        sendJson(res, errorStatus(error), errorBody(error));
        return;
      }
      req.webhookEvent = event;
      if (handler === undefined && next !== undefined) {
        next();
        return;
      }
      if (handler !== undefined) await handler(event, req, res);
      if (!res.headersSent) sendJson(res, 200, { received: true });
    } catch (error) {
      if (next !== undefined) {
        next(error);
        return;
      }
      (options?.onError ?? ((e: unknown) => console.error(e)))(error, req);
      if (!res.headersSent) {
        sendJson(res, 500, {
          error: { type: "api_error", code: "internal_error", message: "Internal error" },
        });
      } else if (!res.writableEnded) {
        res.destroy();
      }
    }
  };
}
