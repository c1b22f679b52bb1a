// POSTs one event to the developer's local receiver the way the server's webhook delivery does:
// the stored body bytes, signed anew per attempt by the verifier's `deliveryHeaders` (as the
// server's are), on undici's `request` (which sends exactly the headers given, follows no
// redirect, and is what the server's delivery uses). A receiver that is
// down is retried a few times with a short backoff, then reported; nothing here throws for what
// the receiver does.
import { setTimeout as sleep } from "node:timers/promises";
import { deliveryHeaders } from "@deskline/webhook-verifier";
import { request } from "undici";
import { VERSION } from "../version.js";

/** As the server's deliveries: `Deskline-Webhooks/<version>`. */
const USER_AGENT = `Deskline-Webhooks/${VERSION}`;

export interface ForwardRequest {
  url: string;
  /** The event's JSON, byte for byte as the server delivers it. */
  payload: string;
  eventId: string;
  eventType: string;
  secret: string;
}

export interface ForwardOptions {
  /** Ctrl-C: stops waiting for an answer or a retry at once. */
  signal?: AbortSignal;
  /** Bound on one attempt, as the server's WEBHOOK_TIMEOUT_MS (default 10 s). */
  timeoutMs?: number;
  /** Waits before each retry when the receiver did not answer. */
  retryDelaysMs?: readonly number[];
  /** Called when an attempt got no answer and another follows. */
  onRetry?: (failure: string, attempt: number, delayMs: number) => void;
}

export interface ForwardResult {
  /** The receiver's HTTP status, or null when it never answered. */
  status: number | null;
  /** Duration of the last attempt. */
  durationMs: number;
  attempts: number;
  /** Why the last attempt got no answer. */
  error: string | null;
}

/** A receiver that is not up yet (still starting, restarting after an edit) gets ~3.5 s. */
export const RETRY_DELAYS_MS = [500, 1000, 2000];

const FAILURES: Record<string, string> = {
  ECONNREFUSED: "connection refused (is the receiver running?)",
  ECONNRESET: "connection reset",
  ENOTFOUND: "host not found",
  UND_ERR_SOCKET: "connection closed before an answer",
  UND_ERR_HEADERS_TIMEOUT: "no answer in time",
};

/** Node's error codes sit on the error or its causes (AggregateError for dual-stack connects). */
function describeFailure(error: unknown): string {
  let current = error as { code?: string; message?: string; cause?: unknown; errors?: unknown[] } | undefined;
  for (let depth = 0; current && depth < 5; depth++) {
    const code = current.code ?? (current.errors?.[0] as { code?: string } | undefined)?.code;
    if (code && code !== "UND_ERR") return FAILURES[code] ?? `${code}: ${current.message ?? ""}`.trim();
    current = current.cause as typeof current;
  }
  return error instanceof Error ? error.message : String(error);
}

export async function forwardEvent(
  event: ForwardRequest,
  options: ForwardOptions = {},
): Promise<ForwardResult> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const delays = options.retryDelaysMs ?? RETRY_DELAYS_MS;
  for (let attempt = 1; ; attempt++) {
    const started = performance.now();
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    let failure: string;
    try {
      const response = await request(event.url, {
        method: "POST",
        body: event.payload,
        headers: deliveryHeaders({ ...event, userAgent: USER_AGENT }),
        signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      // The answer's body does not matter, but it must not hold the connection.
      await response.body.dump({ limit: 64 * 1024 }).catch(() => {});
      return { status: response.statusCode, durationMs: elapsed(started), attempts: attempt, error: null };
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      failure = timeout.aborted ? `no answer within ${timeoutMs} ms` : describeFailure(error);
    }
    const delay = delays[attempt - 1];
    if (delay === undefined) {
      return { status: null, durationMs: elapsed(started), attempts: attempt, error: failure };
    }
    options.onRetry?.(failure, attempt, delay);
    await sleep(delay, undefined, { signal: options.signal });
  }
}

const elapsed = (started: number) => Math.round(performance.now() - started);
