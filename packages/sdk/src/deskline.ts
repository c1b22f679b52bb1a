// `new Deskline({ apiKey, baseUrl })`: one namespace per resource, methods that throw typed
// errors. Both entry points (index.ts for Node, web.ts for the rest) export it with their own
// default transport.
import {
  type ClientContext,
  type ClientOptions,
  createClientContext,
  type DesklineClient,
} from "./client.js";
import {
  ConsoleLinks,
  Contacts,
  Conversations,
  CustomFieldDefinitions,
  Events,
  Tickets,
  WebhookEndpoints,
} from "./resources.js";
import type { Transport } from "./transport.js";

export type DesklineOptions = ClientOptions;

export class DesklineBase {
  readonly contacts: Contacts;
  /** Typed custom fields of contacts: `list`, `create`, `get(key)`, `update(key, body)`, `delete(key)`. */
  readonly customFieldDefinitions: CustomFieldDefinitions;
  readonly tickets: Tickets;
  readonly conversations: Conversations;
  readonly webhookEndpoints: WebhookEndpoints;
  readonly events: Events;
  /** Links to the webhook console for the key's workspace (`deskline console` in the CLI). */
  readonly consoleLinks: ConsoleLinks;
  /** The underlying openapi-fetch client (same transport, retries and auth), for calls by path. */
  readonly raw: DesklineClient;

  protected constructor(options: DesklineOptions, defaultTransport: () => Transport) {
    const context: ClientContext = createClientContext(options, defaultTransport);
    this.raw = context.client;
    this.contacts = new Contacts(context);
    this.customFieldDefinitions = new CustomFieldDefinitions(context);
    this.tickets = new Tickets(context);
    this.conversations = new Conversations(context);
    this.webhookEndpoints = new WebhookEndpoints(context);
    this.events = new Events(context);
    this.consoleLinks = new ConsoleLinks(context);
  }
}
