// The one seam between the SDK and the network. A transport sends one attempt and returns the
// whole answer; attempt-fetch.ts makes it the client's fetch, and the retry middleware
// (retry-middleware.ts) sends through it again. Node gets undici by default
// (undici-transport.ts); every other runtime, or a caller's own `fetch`, goes through fetchTransport.

export interface TransportRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
  signal: AbortSignal;
}

/** One attempt's answer, its body read in full (so a timeout covers the body too). */
export interface TransportResponse {
  status: number;
  headers: Headers;
  body: string;
}

export type Transport = (request: TransportRequest) => Promise<TransportResponse>;

/** A `fetch`-compatible function: the global one, or one a runtime or test provides. */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** A transport over any `fetch` (browsers, Deno, Bun, edge runtimes, or a caller's override). */
export function fetchTransport(
  fetchImpl: FetchLike = (input, init) => globalThis.fetch(input, init),
): Transport {
  return async ({ url, method, headers, body, signal }) => {
    const response = await fetchImpl(url, { method, headers, body, signal });
    return { status: response.status, headers: response.headers, body: await response.text() };
  };
}
