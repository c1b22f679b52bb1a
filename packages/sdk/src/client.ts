// The raw client: openapi-fetch typed by the generated paths, for callers who want
// `{ data, error, response }` by path instead of exceptions. The Deskline class builds on it.

import type { paths } from "@deskline/spec/openapi";
import createClient, { type Client } from "openapi-fetch";
import {
  attemptFetch,
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT_MS,
  type ResilienceSettings,
} from "./attempt-fetch.js";
import { retryMiddleware } from "./retry-middleware.js";
import { type FetchLike, fetchTransport, type Transport } from "./transport.js";
import { VERSION } from "./version.js";

export interface ClientOptions {
  /** The API key (`dsk_…`), sent as `Authorization: Bearer <apiKey>`. */
  apiKey: string;
  /** The server's base URL, without `/open/v1`, e.g. `https://deskline.example.com`. */
  baseUrl: string;
  /** Milliseconds each attempt may take, body included. Default 30 000. */
  timeoutMs?: number;
  /** Retries after a failed attempt (network error, timeout, 408, 409 in flight or concurrent, 429, 5xx). Default 2. */
  maxRetries?: number;
  /**
   * A `fetch` to send requests with, for runtimes or tests that bring their own. Default: undici
   * with keep-alive in Node (the main entry), the global `fetch` elsewhere (the browser entry).
   */
  fetch?: FetchLike;
}

export type DesklineClient = Client<paths, "application/json">;

/** What the entry points share: the client, its transport and retries set up. */
export interface ClientContext {
  client: DesklineClient;
}

export function createClientContext(
  options: ClientOptions,
  defaultTransport: () => Transport,
): ClientContext {
  if (!options.apiKey) throw new TypeError("Deskline: `apiKey` is required.");
  if (!options.baseUrl) throw new TypeError("Deskline: `baseUrl` is required.");
  const transport = options.fetch ? fetchTransport(options.fetch) : defaultTransport();
  const settings: ResilienceSettings = {
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    maxRetries: options.maxRetries ?? DEFAULT_MAX_RETRIES,
  };
  // openapi-fetch sends each request through `send` once; the retry middleware sends it again.
  const send = attemptFetch(transport, settings);
  const client = createClient<paths>({
    baseUrl: options.baseUrl,
    headers: {
      Authorization: `Bearer ${options.apiKey}`,
      "User-Agent": `Deskline-SDK/${VERSION}`,
      "Deskline-SDK": `js/${VERSION}`,
    },
    fetch: send,
  });
  const retries = retryMiddleware(send, settings);
  client.use(retries);
  // Kept the innermost middleware, next to fetch: one a caller adds later sees the request before
  // its Idempotency-Key and, in `onResponse`, the final answer of the retries.
  const use = client.use.bind(client);
  client.use = (...middleware) => {
    client.eject(retries);
    use(...middleware, retries);
  };
  return { client };
}
