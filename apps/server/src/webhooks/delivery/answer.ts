import type { Readable } from "node:stream";
import type { Schema } from "../../spec/types.js";

/**
 * The receiver's answer kept with an attempt (docs/decisions.md, "The console's reads: counted
 * when asked, bounded"): a few of its headers and the start of its body, so a developer reads
 * what their server said. Bounded
 * on every side: at most BODY_BYTES of the body are kept, reading stops once they are in (the
 * rest of the body is never read: the connection is closed rather than drained), a header
 * value is cut at HEADER_CHARS. The text is data for the API to return as a JSON string; nothing
 * here or in the API renders it.
 */

export type ReceiverAnswer = Schema<"DeliveryAttemptResponse">;

export const BODY_BYTES = 1024;
const HEADER_CHARS = 256;
/** The headers kept: what the body is, and what a 429 or 503 asked for. */
const KEPT_HEADERS = ["content-type", "content-length", "retry-after"] as const;

/** Pure: the kept headers, as the receiver sent them (one value each, cut to length). */
export function keptHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = headers[name];
    const text = Array.isArray(value) ? value.join(", ") : value;
    if (text !== undefined) kept[name] = text.slice(0, HEADER_CHARS);
  }
  return kept;
}

/**
 * Pure: the longest prefix of `bytes` of at most `max` bytes that ends on a UTF-8 character's
 * boundary, decoded (bytes that are not UTF-8 decode as U+FFFD, one character each).
 */
export function utf8Prefix(bytes: Buffer, max = BODY_BYTES): string {
  if (bytes.length <= max) return bytes.toString("utf8");
  let end = max;
  // Back off continuation bytes (10xxxxxx), at most 3: a character is at most 4 bytes.
  while (end > max - 3 && ((bytes[end] as number) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString("utf8");
}

/**
 * Reads the start of `body` — until more than `max` bytes are in, or it ends, or `signal` aborts
 * — then stops reading it. Never throws: a body that breaks off keeps what came.
 */
export async function readAnswerStart(
  body: Readable,
  signal: AbortSignal,
  max = BODY_BYTES,
): Promise<{ bytes: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let length = 0;
  let ended = false;
  try {
    for await (const chunk of body) {
      chunks.push(chunk as Buffer);
      length += (chunk as Buffer).length;
      if (length > max || signal.aborted) break;
    }
    ended = length <= max && !signal.aborted;
  } catch {
    // Aborted or broken off mid-body: what came is what is kept.
  }
  // Leaving the loop early destroys the stream: the rest is never read from the socket.
  if (!ended) body.destroy();
  const bytes = Buffer.concat(chunks, length);
  return { bytes, truncated: !ended };
}

/** The answer as kept: its headers, and the start of its body as text. */
export function receiverAnswer(
  headers: Record<string, string | string[] | undefined>,
  start: { bytes: Buffer; truncated: boolean },
): ReceiverAnswer {
  return {
    headers: keptHeaders(headers),
    body: utf8Prefix(start.bytes),
    body_truncated: start.truncated || start.bytes.length > BODY_BYTES,
  };
}
