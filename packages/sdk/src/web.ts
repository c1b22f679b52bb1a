// The entry for browsers, Deno, Bun, Cloudflare Workers and other edge runtimes: the global
// `fetch` is the transport. Nothing Node-only is imported here (a package test checks it).
import { type ClientOptions, createClientContext, type DesklineClient } from "./client.js";
import { DesklineBase, type DesklineOptions } from "./deskline.js";
import { fetchTransport } from "./transport.js";

export * from "./shared-exports.js";

/** The Deskline API client: `new Deskline({ apiKey, baseUrl })`, then `deskline.contacts.create(…)`. */
export class Deskline extends DesklineBase {
  constructor(options: DesklineOptions) {
    super(options, () => fetchTransport());
  }
}

/** The raw openapi-fetch client: `GET/POST/PATCH/DELETE` by path, resolving to `{ data, error, response }`. */
export function createDesklineClient(options: ClientOptions): DesklineClient {
  return createClientContext(options, () => fetchTransport()).client;
}
