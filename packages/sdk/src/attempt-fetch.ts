// The `fetch` openapi-fetch is given: it sends ONE attempt of a request over the transport, bounded
// by the attempt's timeout and the caller's signal, and hands back the whole answer. Retrying is
// not done here but by a middleware on the client (retry-middleware.ts), which sends the same
// request through this function again.
import { ConnectionError, TimeoutError } from "./errors.js";
import type { Transport, TransportResponse } from "./transport.js";

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

/**
 * What of RequestOptions rides on the request itself: openapi-fetch copies an init property the
 * Request does not have onto it, where this fetch and the retry middleware read it.
 */
interface WithSettings {
  deskline?: Partial<ResilienceSettings>;
}

/** The openapi-fetch init for a call with these options (headers, signal, and the settings). */
export function requestInit(options: RequestOptions): {
  signal?: AbortSignal;
  headers?: Record<string, string>;
} & WithSettings {
  const headers =
    options.idempotencyKey === undefined
      ? options.headers
      : { ...options.headers, "idempotency-key": options.idempotencyKey };
  return {
    ...(options.signal && { signal: options.signal }),
    ...(headers && { headers }),
    ...((options.timeoutMs !== undefined || options.maxRetries !== undefined) && {
      deskline: { timeoutMs: options.timeoutMs, maxRetries: options.maxRetries },
    }),
  };
}

/** The settings of one request: its own where the call gave them, the client's otherwise. */
export function settingsOf(request: Request, client: ResilienceSettings): ResilienceSettings {
  const own = (request as WithSettings).deskline;
  return {
    timeoutMs: own?.timeoutMs ?? client.timeoutMs,
    maxRetries: own?.maxRetries ?? client.maxRetries,
  };
}

/**
 * A Response whose body is already text. Built without a body stream (the costliest part of a
 * Response in Node), it still is a `Response` for openapi-fetch and its middlewares; `body` is
 * null, and the reading methods below answer from the text.
 */
export class BufferedResponse extends Response {
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

/** A request's headers and body, read once: its retries send the same bytes. */
interface Prepared {
  headers: Record<string, string>;
  body: string | undefined;
}

export type AttemptFetch = (request: Request) => Promise<Response>;

/**
 * The fetch for openapi-fetch: one attempt per call. Fails with TimeoutError or ConnectionError
 * when no answer comes, or with the caller's reason when its signal aborts.
 */
export function attemptFetch(transport: Transport, client: ResilienceSettings): AttemptFetch {
  const prepared = new WeakMap<Request, Prepared>();
  const prepare = async (request: Request): Promise<Prepared> => {
    let ready = prepared.get(request);
    if (!ready) {
      const headers: Record<string, string> = {};
      request.headers.forEach((value, name) => {
        headers[name] = value;
      });
      ready = { headers, body: request.body === null ? undefined : await request.text() };
      prepared.set(request, ready);
    }
    return ready;
  };

  return async (request) => {
    const caller = request.signal;
    caller.throwIfAborted();
    const { headers, body } = await prepare(request);
    const { timeoutMs } = settingsOf(request, client);
    // The attempt ends at its timeout or when the caller aborts, whichever comes first.
    const attempt = new AbortController();
    const onAbort = () => attempt.abort(caller.reason);
    caller.addEventListener("abort", onAbort, { once: true });
    const timer = setTimeout(() => attempt.abort(), timeoutMs);
    try {
      const { url, method } = request;
      const answer = await transport({ url, method, headers, body, signal: attempt.signal });
      return new BufferedResponse(answer);
    } catch (cause) {
      if (caller.aborted) throw caller.reason;
      throw attempt.signal.aborted
        ? new TimeoutError(`No response from ${request.method} ${request.url} within ${timeoutMs} ms.`, {
            cause,
          })
        : new ConnectionError(`Could not reach ${request.url}: ${(cause as Error)?.message ?? cause}`, {
            cause,
          });
    } finally {
      clearTimeout(timer);
      caller.removeEventListener("abort", onAbort);
    }
  };
}
