// The Node entry: like web.ts, but requests go through undici with keep-alive by default
// (a `fetch` option still replaces it).
import { type ClientOptions, createClientContext, type DesklineClient } from "./client.js";
import { DesklineBase, type DesklineOptions } from "./deskline.js";
import { undiciTransport } from "./undici-transport.js";

export * from "./shared-exports.js";

/** The Deskline API client: `new Deskline({ apiKey, baseUrl })`, then `deskline.contacts.create(…)`. */
export class Deskline extends DesklineBase {
  constructor(options: DesklineOptions) {
    super(options, undiciTransport);
  }
}

/** The raw openapi-fetch client: `GET/POST/PATCH/DELETE` by path, resolving to `{ data, error, response }`. */
export function createDesklineClient(options: ClientOptions): DesklineClient {
  return createClientContext(options, undiciTransport).client;
}
