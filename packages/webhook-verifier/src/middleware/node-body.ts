// The raw body of a node request, for the Koa and node/Express middlewares: the copy a body
// parser kept, or the stream read with a size cap.
import type { IncomingMessage } from "node:http";
import type { Readable } from "node:stream";
import type { WebhookPayload } from "../core.js";
import { declaredTooLarge, tooLarge } from "./shared.js";

/** What earlier middleware may have left of the body. */
export interface KeptBody {
  /** A raw copy, string or bytes (koa-bodyparser's `rawBody`, a custom parser's `req.rawBody`). */
  rawBody?: unknown;
  /** The parsed body; used only when it is bytes (express.raw()'s Buffer). */
  body?: unknown;
}

/**
 * The payload to verify: the raw copy a body parser kept, else bytes it left as the body, else
 * the request stream read here. Either way more than `max` bytes is `payload_too_large`.
 */
export async function payloadOf(req: IncomingMessage, kept: KeptBody, max: number): Promise<WebhookPayload> {
  const { rawBody, body } = kept;
  const payload =
    typeof rawBody === "string" || rawBody instanceof Uint8Array
      ? rawBody
      : body instanceof Uint8Array
        ? body
        : undefined;
  if (payload === undefined) return readBody(req, req.headers["content-length"], max);
  const size = typeof payload === "string" ? Buffer.byteLength(payload, "utf8") : payload.byteLength;
  if (size > max) throw tooLarge(max);
  return payload;
}

/**
 * Reads a request stream into one Buffer, refusing more than `max` bytes. On refusal the rest
 * of the stream is drained and dropped (as body-parser does), so the 413 reaches the client
 * instead of a connection reset, and nothing more is buffered. `req` is the request itself or
 * the stream a framework hands over in its place (Fastify's parsers).
 */
export function readBody(req: Readable, contentLength: string | undefined, max: number): Promise<Buffer> {
  if (declaredTooLarge(contentLength, max)) {
    req.resume();
    return Promise.reject(tooLarge(max));
  }
  if (req.readableEnded) {
    return Promise.reject(
      new Error(
        "The webhook request body was already consumed by a body parser that kept no raw copy; " +
          "mount the webhook middleware before it, or use express.raw({ type: 'application/json' })",
      ),
    );
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("aborted", onAborted);
    };
    const onData = (chunk: Buffer | string) => {
      const buf = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
      size += buf.byteLength;
      if (size > max) {
        cleanup();
        chunks.length = 0;
        req.resume();
        reject(tooLarge(max));
        return;
      }
      chunks.push(buf);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const onAborted = () => onError(new Error("The webhook request was aborted by the client"));
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("aborted", onAborted);
  });
}
