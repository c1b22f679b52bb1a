// Node's default transport: undici's `request` over a keep-alive Agent. It skips the WHATWG
// streams and Request/Response objects of `fetch` on the hot path (see bench/), and keeps
// connections open between calls. Node-only: the browser entry (web.ts) never imports it.
import { Agent, request } from "undici";
import type { Transport } from "./transport.js";

export interface UndiciTransportOptions {
  /** How long an idle connection stays open for the next call. Default 30 s. */
  keepAliveTimeoutMs?: number;
  /** Connections per origin at most. Default unlimited, as undici's. */
  connections?: number;
}

export function undiciTransport(options: UndiciTransportOptions = {}): Transport {
  const dispatcher = new Agent({
    keepAliveTimeout: options.keepAliveTimeoutMs ?? 30_000,
    keepAliveMaxTimeout: 600_000,
    connections: options.connections ?? null,
  });
  return async ({ url, method, headers, body, signal }) => {
    const response = await request(url, {
      method: method as "GET",
      headers,
      body,
      signal,
      dispatcher,
    });
    const text = await response.body.text();
    const responseHeaders = new Headers();
    for (const [name, value] of Object.entries(response.headers)) {
      if (Array.isArray(value)) for (const item of value) responseHeaders.append(name, item);
      else if (value !== undefined) responseHeaders.set(name, value);
    }
    return { status: response.statusCode, headers: responseHeaders, body: text };
  };
}
