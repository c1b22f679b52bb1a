// The namespaces of `new Deskline()`, one per resource of the spec. Each method is one line that
// names its spec path; every parameter, body and result type is derived from the generated types.
// A new spec operation is one more line here (and a new resource one more small class).

import type { components, paths } from "@deskline/spec/openapi";
import type { RequestOptions } from "./attempt-fetch.js";
import type { ClientContext } from "./client.js";
import {
  type BodyOf,
  call,
  type OperationOf,
  type PathsWith,
  type QueryOf,
  type ResultOf,
} from "./operations.js";
import { type Continuation, continuationAfter, type Page, PagePromise } from "./paginate.js";

type ItemOf<P> = P extends Page<infer Item> ? Item : never;
type ListResult<P extends keyof paths> = ResultOf<OperationOf<P, "get">>;
type Listed<P extends PathsWith<"get">> = PagePromise<
  ListResult<P> & Page<ItemOf<ListResult<P>>>,
  ItemOf<ListResult<P>> & { id: string }
>;

/** Builders of resource methods bound to one client; typed by the spec path they name. */
class Resource {
  constructor(protected readonly context: ClientContext) {}

  /** `list(query?, options?)` for a collection path. */
  protected lister<P extends PathsWith<"get">>(path: P) {
    return (query?: QueryOf<OperationOf<P, "get">>, options?: RequestOptions): Listed<P> =>
      this.pages(path, {}, query, options);
  }

  /** `list(parentId, query?, options?)` for a collection nested under a parent (`…/{id}/…`). */
  protected nestedLister<P extends PathsWith<"get">>(path: P) {
    return (parentId: string, query?: QueryOf<OperationOf<P, "get">>, options?: RequestOptions): Listed<P> =>
      this.pages(path, { id: parentId }, query, options);
  }

  /** `read(options?)`: a GET of a path that takes nothing (a catalog). */
  protected reader<P extends PathsWith<"get">>(path: P) {
    return (options?: RequestOptions) =>
      call<ResultOf<OperationOf<P, "get">>>(this.context, "get", path, {}, options);
  }

  /** `get(id, options?)`, `delete(id, options?)` and other operations on one object by id. */
  protected byId<P extends PathsWith<M>, M extends "get" | "delete">(method: M, path: P) {
    return (id: string, options?: RequestOptions) =>
      call<ResultOf<OperationOf<P, M>>>(this.context, method, path, { pathParams: { id } }, options);
  }

  /** `create(body, options?)`: a POST to a collection. */
  protected creator<P extends PathsWith<"post">>(path: P) {
    return (body: BodyOf<OperationOf<P, "post">>, options?: RequestOptions) =>
      call<ResultOf<OperationOf<P, "post">>>(this.context, "post", path, { body }, options);
  }

  /** `create(parentId, body, options?)`: a POST to a collection nested under a parent. */
  protected nestedCreator<P extends PathsWith<"post">>(path: P) {
    return (parentId: string, body: BodyOf<OperationOf<P, "post">>, options?: RequestOptions) =>
      call<ResultOf<OperationOf<P, "post">>>(
        this.context,
        "post",
        path,
        { pathParams: { id: parentId }, body },
        options,
      );
  }

  /** `action(id, body?, options?)`: a POST to an action of one object (`…/{id}/rotate-secret`). */
  protected action<P extends PathsWith<"post">>(path: P) {
    return (id: string, body?: BodyOf<OperationOf<P, "post">>, options?: RequestOptions) =>
      call<ResultOf<OperationOf<P, "post">>>(
        this.context,
        "post",
        path,
        { pathParams: { id }, body: body ?? {} },
        options,
      );
  }

  /** `update(id, body, options?)`: a PATCH of one object. */
  protected updater<P extends PathsWith<"patch">>(path: P) {
    return (id: string, body: BodyOf<OperationOf<P, "patch">>, options?: RequestOptions) =>
      call<ResultOf<OperationOf<P, "patch">>>(
        this.context,
        "patch",
        path,
        { pathParams: { id }, body },
        options,
      );
  }

  private pages<P extends PathsWith<"get">>(
    path: P,
    pathParams: Record<string, string>,
    query: object | undefined,
    options: RequestOptions | undefined,
  ): Listed<P> {
    return new PagePromise((next) =>
      call(this.context, "get", path, { pathParams, query: continued(query, next) }, options),
    );
  }

  /** `pull(start, options?)`: the pages of an incremental pull (see `Pull`). */
  protected puller<P extends "/open/v1/contacts" | "/open/v1/tickets">(path: P) {
    return (start: PullStart<P>, options?: RequestOptions): Pull<ListResult<P>> =>
      new Pull((next) => call(this.context, "get", path, { query: continued(start, next) }, options));
  }
}

/** The query of a page: the first page's, or the continuation in place of its starting point. */
function continued(query: object | undefined, next: Continuation | undefined): object | undefined {
  if (!next) return query;
  const {
    starting_after: _after,
    updated_after: _since,
    cursor: _cursor,
    ...rest
  } = (query ?? {}) as Record<string, unknown>;
  return { ...rest, ...next };
}

/**
 * Where an incremental pull starts: `updated_after` (`0` for everything) or the `cursor` kept from
 * the last run, with the list's filters and `limit`.
 */
export type PullStart<P extends keyof paths> = Omit<
  QueryOf<OperationOf<P, "get">>,
  "starting_after" | "updated_after" | "cursor"
> &
  ({ updated_after: string | number; cursor?: never } | { cursor: string; updated_after?: never });

/**
 * The pages of an incremental pull (spec: *Incremental pull*), oldest change first, until it has
 * caught up. Each page holds the changed records (`data`), the deletions (`deleted`) and the
 * `next_cursor` to keep; store it once the page is applied and start the next run from it:
 *
 * ```ts
 * for await (const page of deskline.contacts.pull({ cursor: saved ?? undefined, updated_after: saved ? undefined : 0 })) {
 *   for (const contact of page.data) upsert(contact);
 *   for (const gone of page.deleted ?? []) remove(gone.id);
 *   save(page.next_cursor);
 * }
 * ```
 */
export class Pull<P extends Page<{ id: string }>> implements AsyncIterable<P> {
  constructor(private readonly fetchPage: (next: Continuation | undefined) => Promise<P>) {}

  async *[Symbol.asyncIterator](): AsyncIterator<P> {
    for (let next: Continuation | undefined; ; ) {
      const page = await this.fetchPage(next);
      yield page;
      next = continuationAfter(page);
      if (!next) return;
    }
  }
}

/** One item of `contacts.batch`: the fields of a contact update (`name` is needed to create one). */
export type ContactBatchItem = components["schemas"]["ContactUpdate"];

export class Contacts extends Resource {
  list = this.lister("/open/v1/contacts");
  /** Every contact changed since `updated_after` or a kept `cursor`, page by page (see `Pull`). */
  pull = this.puller("/open/v1/contacts");
  create = this.creator("/open/v1/contacts");
  get = this.byId("get", "/open/v1/contacts/{id}");
  update = this.updater("/open/v1/contacts/{id}");
  delete = this.byId("delete", "/open/v1/contacts/{id}");
  readonly #batch = this.creator("/open/v1/contacts/batch");
  /**
   * Creates or updates up to 100 contacts matched by `match` (`email` or `external_ids.<system>`);
   * resolves to one result per item, in input order (`created`, `updated`, `unchanged` with the
   * contact, or `error` with the error); a failing item never fails the others.
   */
  batch = (
    body: { match: "email" | `external_ids.${string}`; contacts: ContactBatchItem[] },
    options?: RequestOptions,
  ) => this.#batch(body, options);
  /**
   * Merges `contact_ids` into the contact `id` (tickets and conversations move to it, tags,
   * segments and external ids are unioned, its empty fields filled, the others deleted); `prefer`
   * names whose values win a conflict. Safe to retry. Resolves to the surviving contact.
   */
  merge = this.action("/open/v1/contacts/{id}/merge");
}

export class Tickets extends Resource {
  list = this.lister("/open/v1/tickets");
  /** Every ticket changed since `updated_after` or a kept `cursor`, page by page (see `Pull`). */
  pull = this.puller("/open/v1/tickets");
  create = this.creator("/open/v1/tickets");
  get = this.byId("get", "/open/v1/tickets/{id}");
  update = this.updater("/open/v1/tickets/{id}");
  delete = this.byId("delete", "/open/v1/tickets/{id}");
}

export class Messages extends Resource {
  /** The messages of a conversation, newest first. */
  list = this.nestedLister("/open/v1/conversations/{id}/messages");
  /** Sends an agent message (or an internal note) into a conversation. */
  create = this.nestedCreator("/open/v1/conversations/{id}/messages");
  /** Same as `create`: the spec's `sendMessage`. */
  send = this.create;
}

export class Conversations extends Resource {
  list = this.lister("/open/v1/conversations");
  get = this.byId("get", "/open/v1/conversations/{id}");
  readonly messages = new Messages(this.context);
}

export class WebhookEndpoints extends Resource {
  list = this.lister("/open/v1/webhook-endpoints");
  /** The response carries the signing `secret`, this once. */
  create = this.creator("/open/v1/webhook-endpoints");
  get = this.byId("get", "/open/v1/webhook-endpoints/{id}");
  update = this.updater("/open/v1/webhook-endpoints/{id}");
  delete = this.byId("delete", "/open/v1/webhook-endpoints/{id}");
  /** A new signing secret (returned this once); the old one stays valid for `expires_in` seconds. */
  rotateSecret = this.action("/open/v1/webhook-endpoints/{id}/rotate-secret");
  /** Every delivery attempt to the endpoint, newest first: status, duration and why it failed. */
  listAttempts = this.nestedLister("/open/v1/webhook-endpoints/{id}/attempts");
  /**
   * The endpoint's deliveries (one event each), newest first, with their `status` (`pending`,
   * `succeeded`, `failed`, `dropped`), attempts and last answer; filter by `status`,
   * `event_type`, `created_after`/`created_before`. Iterate to walk every page.
   */
  deliveries = this.nestedLister("/open/v1/webhook-endpoints/{id}/deliveries");
  /** The endpoint's deliveries of the last 24 hours counted by status, in total and per hour. */
  stats = this.byId("get", "/open/v1/webhook-endpoints/{id}/stats");
  /**
   * Queues, oldest first, one delivery of every event from `since` to `until` (default now) that
   * the endpoint subscribes to and never received: failed, dropped, or never sent while it was
   * disabled. Safe to repeat. After an outage: enable the endpoint (`update(id, { status:
   * "enabled" })`; a disabled one is a `ConflictError`), then recover since the first failure.
   * Resolves at once to the recovery, `queued`; the server's workers then page through the
   * window. Follow it with `getRecovery`, or `waitForRecovery`. One recovery of an endpoint runs
   * at a time: another meanwhile is a `ConflictError` (`webhook_recovery_in_progress`).
   */
  recover = this.nestedCreator("/open/v1/webhook-endpoints/{id}/recover");
  /** A recovery and its progress: `status` (`queued`, `running`, `succeeded`), `scanned`, `queued`. */
  getRecovery = this.byId("get", "/open/v1/webhook-recoveries/{id}");

  /**
   * Reads the recovery every `intervalMs` (default 1000) until it `succeeded`, telling
   * `onProgress` of each reading; resolves to the finished recovery. `signal` stops the wait.
   */
  async waitForRecovery(
    id: string,
    options: {
      intervalMs?: number;
      onProgress?: (recovery: WebhookRecovery) => void;
      signal?: AbortSignal;
    } = {},
  ): Promise<WebhookRecovery> {
    for (;;) {
      const recovery = await this.getRecovery(id, options.signal ? { signal: options.signal } : undefined);
      options.onProgress?.(recovery);
      if (recovery.status === "succeeded") return recovery;
      await pause(options.intervalMs ?? 1_000, options.signal);
    }
  }
}

type WebhookRecovery = components["schemas"]["WebhookRecovery"];

/** Waits `ms`, or rejects with the signal's reason once it aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((done, fail) => {
    if (signal?.aborted) return fail(signal.reason);
    const timer = setTimeout(done, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        fail(signal.reason);
      },
      { once: true },
    );
  });
}

export class Events extends Resource {
  /** Recorded events, newest first (the same bodies the webhooks deliver). */
  list = this.lister("/open/v1/events");
  get = this.byId("get", "/open/v1/events/{id}");
  /**
   * Delivers the event again, with the same id and bytes (receivers that drop duplicates by event
   * id stay correct) and the normal retries: to `endpoint_id`, or, without it, to every enabled
   * endpoint subscribed to its type. Resolves to the list of deliveries it queued. An event past
   * retention is a `NotFoundError`, a disabled endpoint a `ConflictError`.
   */
  resend = this.action("/open/v1/events/{id}/resend");
  /** The event's deliveries, one per endpoint it was sent (or resent) to, newest first. */
  deliveries = this.nestedLister("/open/v1/events/{id}/deliveries");
  /**
   * The event-type catalog: every type an endpoint can subscribe to, with its description, the
   * JSON Schema of its body and whether it is operational (about the webhooks themselves).
   * Resolves to one page holding them all.
   */
  types = this.reader("/open/v1/event-types");
}
