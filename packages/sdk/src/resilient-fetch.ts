// Turns a transport into the `fetch` openapi-fetch calls, adding what every request needs:
// identification headers, an Idempotency-Key on each POST (kept across its retries, so a retry
// never creates twice), a timeout per attempt, the caller's AbortSignal, and retries with backoff.
import { ConnectionError, type ErrorBody, TimeoutError } from "./errors.js";
import { isRetryableStatus, retryDelayMs } from "./retry.js";
import type { Transport, TransportResponse } from "./transport.js";
import { VERSION } from "./version.js";

/** Per-request settings; every Deskline method takes them as its last argument. */
export interface RequestOptions {
  /** Abandons the request (and its retries); the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Milliseconds each attempt may take, body included. Default: the client's `timeoutMs`. */
  timeoutMs?: number;
  /** Retries after the first attempt. Default: the client's `maxRetries`. */
  maxRetries?: number;
  /** For POSTs: the `Idempotency-Key` to send; a random one is made otherwise. */
  idempotencyKey?: string;
  /** Extra headers for this request. */
  headers?: Record<string, string>;
}

export interface ResilienceSettings {
  timeoutMs: number;
  maxRetries: number;
}

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_RETRIES = 2;

const sleep = (ms: number, signal: AbortSignal | undefined) =>
  new Promise<void>((resolve, reject) => {
    if (ms <= 0) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener("abort", abort);
      resolve();
    }
    function abort() {
      clearTimeout(timer);
      reject(signal?.reason);
    }
    signal?.addEventListener("abort", abort, { once: true });
  });

/**
 * A Response whose body is already text. Built without a body stream (the costliest part of a
 * Response in Node), it still is a `Response` for openapi-fetch and its middlewares; `body` is
 * null, and the reading methods below answer from the text.
 */
class BufferedResponse extends Response {
  constructor(
    answer: TransportResponse,
    readonly bufferedText = answer.body,
  ) {
    super(null, { status: answer.status, headers: answer.headers });
  }
}

// On the prototype, not as class methods: Node's types declare Response's readers as properties,
// which a subclass may not redeclare as methods, and per-instance arrow properties cost a
// closure each on every response.
Object.assign(BufferedResponse.prototype, {
  text(this: BufferedResponse) {
    return Promise.resolve(this.bufferedText);
  },
  json(this: BufferedResponse) {
    return Promise.resolve().then(() => JSON.parse(this.bufferedText));
  },
  arrayBuffer(this: BufferedResponse) {
    return Promise.resolve(new TextEncoder().encode(this.bufferedText).buffer);
  },
  blob(this: BufferedResponse) {
    return Promise.resolve(new Blob([this.bufferedText], { type: this.headers.get("content-type") ?? "" }));
  },
  clone(this: BufferedResponse) {
    return new BufferedResponse({ status: this.status, headers: this.headers, body: this.bufferedText });
  },
});

/** The error code of a JSON error body, if it has one (only read for a 409). */
function errorCode(body: string): string | undefined {
  try {
    return (JSON.parse(body) as { error?: ErrorBody }).error?.code;
  } catch {
    return undefined;
  }
}

export function resilientFetch(
  transport: Transport,
  settings: ResilienceSettings,
  options: RequestOptions = {},
): (request: Request) => Promise<Response> {
  const timeoutMs = options.timeoutMs ?? settings.timeoutMs;
  const maxRetries = options.maxRetries ?? settings.maxRetries;
  const callerSignal = options.signal;

  return async (request) => {
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    headers["user-agent"] = `Deskline-SDK/${VERSION}`;
    headers["deskline-sdk"] = `js/${VERSION}`;
    for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;
    if (request.method === "POST") {
      headers["idempotency-key"] =
        options.idempotencyKey ?? headers["idempotency-key"] ?? crypto.randomUUID();
    }
    const body = request.body === null ? undefined : await request.text();

    for (let attempt = 0; ; attempt++) {
      callerSignal?.throwIfAborted();
      const timeout = new AbortController();
      const timer = setTimeout(() => timeout.abort(), timeoutMs);
      const signal = callerSignal ? AbortSignal.any([callerSignal, timeout.signal]) : timeout.signal;
      let answer: TransportResponse | undefined;
      let failure: ConnectionError | TimeoutError | undefined;
      try {
        answer = await transport({ url: request.url, method: request.method, headers, body, signal });
      } catch (cause) {
        if (callerSignal?.aborted) throw callerSignal.reason;
        failure = timeout.signal.aborted
          ? new TimeoutError(`No response from ${request.method} ${request.url} within ${timeoutMs} ms.`, {
              cause,
            })
          : new ConnectionError(`Could not reach ${request.url}: ${(cause as Error)?.message ?? cause}`, {
              cause,
            });
      } finally {
        clearTimeout(timer);
      }

      const retryable = answer
        ? isRetryableStatus(answer.status, answer.status === 409 ? errorCode(answer.body) : undefined)
        : true;
      if (attempt >= maxRetries || !retryable) {
        if (answer) return new BufferedResponse(answer);
        throw failure;
      }
      await sleep(retryDelayMs(attempt + 1, answer?.headers.get("retry-after")), callerSignal);
    }
  };
}
