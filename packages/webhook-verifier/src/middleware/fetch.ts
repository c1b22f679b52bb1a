// `@deskline/webhook-verifier/fetch`: for fetch-style handlers (Bun.serve, Deno.serve, Cloudflare
// Workers, Hono, Next.js route handlers). Built on WebCrypto only: no node import.
import type { WebhookSecret } from "../core.js";
import { WebhookVerificationError } from "../errors.js";
import type { DesklineEvent } from "../event.js";
import { constructEventAsync } from "../webcrypto.js";
import {
  declaredTooLarge,
  errorBody,
  errorStatus,
  maxBodyBytes,
  SIGNATURE_HEADER,
  tooLarge,
  type WebhookMiddlewareOptions,
} from "./shared.js";

/** Options of {@link withWebhookVerification}. */
export type FetchWebhookOptions = WebhookMiddlewareOptions;

/** Reads the body with a cap, cancelling the stream as soon as it is exceeded. */
async function readBody(request: Request, max: number): Promise<Uint8Array> {
  if (declaredTooLarge(request.headers.get("content-length"), max)) throw tooLarge(max);
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      // Not awaited: some runtimes settle a cancel only once the peer stops sending.
      reader.cancel().catch(() => {});
      throw tooLarge(max);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

/**
 * Wraps a fetch-style handler: the delivery is verified first and the handler receives the
 * event; a failed verification is answered 400 (413 for a body over `maxBodyBytes`) with a JSON
 * error body, without calling the handler. Extra arguments (a Worker's `env` and `ctx`) are
 * passed through.
 *
 * @param secret The endpoint's `whsec_…` secret, or several during a rotation.
 * @param handler Called with the verified event and the original request.
 * @param options Body cap, tolerance and clock.
 * @returns `(request, ...rest) => Promise<Response>`.
 */
export function withWebhookVerification<Rest extends unknown[] = []>(
  secret: WebhookSecret,
  handler: (event: DesklineEvent, request: Request, ...rest: Rest) => Response | Promise<Response>,
  options?: FetchWebhookOptions,
): (request: Request, ...rest: Rest) => Promise<Response> {
  const max = maxBodyBytes(options);
  return async (request, ...rest) => {
    let event: DesklineEvent;
    try {
      const body = await readBody(request, max);
      event = await constructEventAsync(body, request.headers.get(SIGNATURE_HEADER), secret, options);
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      return Response.json(errorBody(error), { status: errorStatus(error) });
    }
    return handler(event, request, ...rest);
  };
}
