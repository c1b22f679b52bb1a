// `@deskline/webhook-verifier/fastify`: a Fastify plugin. Fastify parses JSON before any hook
// sees the request, so the raw bytes a signature covers are gone unless a parser keeps them: the
// plugin replaces the body parsers of the scope it is registered in with one that keeps the raw
// Buffer, and verifies every request of that scope before its handler. Fastify itself is only a
// type import here (an optional peer dependency): the package has no runtime dependency.
import type { Readable } from "node:stream";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { WebhookSecret } from "../core.js";
import { WebhookVerificationError } from "../errors.js";
import type { DesklineEvent } from "../event.js";
import { constructEvent } from "../verify.js";
import { readBody } from "./node-body.js";
import type { WebhookMiddlewareOptions } from "./shared.js";
import { errorBody, errorStatus, maxBodyBytes, SIGNATURE_HEADER } from "./shared.js";

declare module "fastify" {
  interface FastifyRequest {
    /**
     * The verified Deskline event, set by `fastifyWebhookPlugin` on every request of the scope
     * it is registered in; absent on routes outside that scope.
     */
    webhookEvent: DesklineEvent;
  }
}

/** Options of {@link fastifyWebhookPlugin}: the secret(s), and those of every middleware. */
export interface FastifyWebhookOptions extends WebhookMiddlewareOptions {
  /** The endpoint's `whsec_…` secret, or several during a rotation. */
  secret: WebhookSecret;
}

/** The raw body, or the verification failure met while reading it (answered by the hook). */
const RAW = Symbol("deskline.rawBody");
interface KeptRequest {
  [RAW]?: Buffer | WebhookVerificationError;
}

/**
 * The content-type parser of the plugin's scope: the body is read from the stream Fastify hands
 * over (after any preParsing hook), with our own cap, so an oversized delivery gets our 413 body
 * rather than Fastify's. A verification error is kept for the preValidation hook to answer.
 */
function rawBodyParser(max: number) {
  return (
    request: FastifyRequest,
    payload: NodeJS.ReadableStream,
    done: (e: Error | null, body?: unknown) => void,
  ) => {
    readBody(payload as Readable, request.headers["content-length"], max).then(
      (raw) => {
        (request as KeptRequest)[RAW] = raw;
        done(null, raw);
      },
      (error: unknown) => {
        if (!(error instanceof WebhookVerificationError)) {
          done(error as Error);
          return;
        }
        (request as KeptRequest)[RAW] = error;
        done(null, undefined);
      },
    );
  };
}

/**
 * Fastify plugin that verifies Deskline deliveries. Every route of the scope it is registered in
 * is verified on its raw bytes before its handler runs; the event is on `request.webhookEvent`
 * (and `request.body` is the raw Buffer). A failed verification is answered 400 (413 for a body
 * over `maxBodyBytes`) with the same JSON error body as the other middlewares.
 *
 * It takes over the body parsing of that scope (every content type is kept as raw bytes), so
 * register it in a scope of its own, beside your other routes:
 *
 * ```ts
 * app.register(async (webhooks) => {
 *   await webhooks.register(fastifyWebhookPlugin, { secret: process.env.DESKLINE_WEBHOOK_SECRET! });
 *   webhooks.post("/webhooks/deskline", async (request) => ({ received: request.webhookEvent.id }));
 * });
 * ```
 */
export async function fastifyWebhookPlugin(
  instance: FastifyInstance,
  options: FastifyWebhookOptions,
): Promise<void> {
  const { secret } = options;
  const max = maxBodyBytes(options);
  // Declared up front (null) so every request object keeps one shape. Fastify types a placeholder
  // decoration as `decorateRequest(name, null, dependencies)` (its value overload wants an event).
  if (!instance.hasRequestDecorator("webhookEvent")) instance.decorateRequest("webhookEvent", null, []);

  const keepRaw = rawBodyParser(max);
  instance.removeAllContentTypeParsers();
  instance.addContentTypeParser("application/json", keepRaw);
  instance.addContentTypeParser("*", keepRaw);

  // preValidation: after the body is read, before a route's schema would judge unverified bytes.
  instance.addHook("preValidation", async (request: FastifyRequest, reply: FastifyReply) => {
    const kept = (request as KeptRequest)[RAW] ?? Buffer.alloc(0);
    try {
      if (kept instanceof WebhookVerificationError) throw kept;
      request.webhookEvent = constructEvent(
        kept,
        request.headers[SIGNATURE_HEADER] as string | undefined,
        secret,
        options,
      );
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      return reply.code(errorStatus(error)).type("application/json; charset=utf-8").send(errorBody(error));
    }
  });
}

// What fastify-plugin sets: the hooks and parsers apply to the scope that registers the plugin
// (no scope of its own; why: docs/decisions.md, "Fastify plugin, tracing, readable logs"), and
// errors and logs name it. Set by hand so nothing is a dependency.
Object.assign(fastifyWebhookPlugin, {
  [Symbol.for("skip-override")]: true,
  [Symbol.for("fastify.display-name")]: "@deskline/webhook-verifier",
  [Symbol.for("plugin-meta")]: { name: "@deskline/webhook-verifier", fastify: ">=5" },
});
