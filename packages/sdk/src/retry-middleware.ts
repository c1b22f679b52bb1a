// Retries as an openapi-fetch middleware, registered on the client with `client.use(...)`: it gives
// every POST an Idempotency-Key (kept across its retries, so a retry never creates twice), and
// sends a request again after a retryable answer (`onResponse`) or a network failure or timeout
// (`onError`), waiting by the rules of retry.ts. The attempts themselves go through the client's
// fetch (attempt-fetch.ts), the same function openapi-fetch calls for the first one.
import type { Middleware } from "openapi-fetch";
import { type AttemptFetch, BufferedResponse, type ResilienceSettings, settingsOf } from "./attempt-fetch.js";
import { ConnectionError, type ErrorBody, TimeoutError } from "./errors.js";
import { isRetryableStatus, retryDelayMs } from "./retry.js";

/** The end of one attempt: an answer, or the failure that left none. */
type Outcome = { response: Response } | { error: ConnectionError | TimeoutError };

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (ms <= 0) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      signal.removeEventListener("abort", abort);
      resolve();
    }
    function abort() {
      clearTimeout(timer);
      reject(signal.reason);
    }
    signal.addEventListener("abort", abort, { once: true });
  });

/** The error code of a JSON error body, if it has one (only read for a 409). */
async function errorCode(response: Response): Promise<string | undefined> {
  try {
    const text = response instanceof BufferedResponse ? response.bufferedText : await response.clone().text();
    return (JSON.parse(text) as { error?: ErrorBody }).error?.code;
  } catch {
    return undefined;
  }
}

async function retryable(outcome: Outcome): Promise<boolean> {
  if ("error" in outcome) return true;
  const { status } = outcome.response;
  return isRetryableStatus(status, status === 409 ? await errorCode(outcome.response) : undefined);
}

export function retryMiddleware(send: AttemptFetch, client: ResilienceSettings): Middleware {
  /** Retries already made per request: `onError` may answer with a Response `onResponse` then sees. */
  const retriesMade = new WeakMap<Request, number>();

  const attempt = async (request: Request): Promise<Outcome> => {
    try {
      return { response: await send(request) };
    } catch (error) {
      if (error instanceof ConnectionError || error instanceof TimeoutError) return { error };
      throw error; // the caller's abort, or a bug: not retried
    }
  };

  /** Sends `request` again while the outcome is retryable and retries are left; the last outcome. */
  const retried = async (request: Request, first: Outcome): Promise<Response | Error> => {
    const { maxRetries } = settingsOf(request, client);
    let outcome = first;
    let made = retriesMade.get(request) ?? 0;
    while (made < maxRetries && (await retryable(outcome))) {
      const retryAfter = "response" in outcome ? outcome.response.headers.get("retry-after") : null;
      await sleep(retryDelayMs(made + 1, retryAfter), request.signal);
      made++;
      retriesMade.set(request, made);
      outcome = await attempt(request);
    }
    return "response" in outcome ? outcome.response : outcome.error;
  };

  return {
    onRequest({ request }) {
      if (request.method === "POST" && !request.headers.has("idempotency-key")) {
        request.headers.set("idempotency-key", crypto.randomUUID());
      }
      return request;
    },
    // Only requests sent by this client's own fetch are sent again (a per-call `fetch` opts out).
    async onResponse({ request, response, options }) {
      // Below 408 nothing is retried: most answers leave here, at the cost of one comparison.
      if (response.status < 408 || options.fetch !== send) return undefined;
      const last = await retried(request, { response });
      if (last instanceof Error) throw last;
      return last;
    },
    async onError({ request, error, options }) {
      if (options.fetch !== send || request.signal.aborted) return undefined;
      if (!(error instanceof ConnectionError || error instanceof TimeoutError)) return undefined;
      return retried(request, { error });
    },
  };
}
