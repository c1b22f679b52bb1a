// Reading a node request body with a size cap, for the Koa and node/Express middlewares.
import type { IncomingMessage } from "node:http";
import { WebhookVerificationError } from "../errors.js";
import { declaredTooLarge } from "./shared.js";

export function tooLarge(max: number): WebhookVerificationError {
  return new WebhookVerificationError("payload_too_large", `The webhook body is larger than ${max} bytes`);
}

/**
 * The raw body a framework already kept (koa-bodyparser's `rawBody`, express.raw()'s Buffer
 * `body`, a `rawBody` Buffer set by a custom parser), or undefined when it kept none.
 */
export function keptRawBody(...candidates: unknown[]): string | Uint8Array | undefined {
  for (const c of candidates) {
    if (typeof c === "string" || c instanceof Uint8Array) return c;
  }
  return undefined;
}

export function byteLength(body: string | Uint8Array): number {
  return typeof body === "string" ? Buffer.byteLength(body, "utf8") : body.byteLength;
}

/**
 * Reads the request stream into one Buffer, refusing more than `max` bytes. On refusal the rest
 * of the stream is drained and dropped (as body-parser does), so the 413 reaches the client
 * instead of a connection reset, and nothing more is buffered.
 */
export function readBody(req: IncomingMessage, max: number): Promise<Buffer> {
  if (declaredTooLarge(req.headers["content-length"], max)) {
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
