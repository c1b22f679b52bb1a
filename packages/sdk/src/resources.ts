// The namespaces of `new Deskline()`, one per resource of the spec. Each method is one line that
// names its spec path; every parameter, body and result type is derived from the generated types,
// and the doc comment above it from the operation's summary and description (`pnpm generate`
// rewrites them: spec/scripts/sdk-docs.ts). A new spec operation is one more line here (and a new
// resource one more small class).

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
import type { ContactSearch, TicketSearch } from "./search.js";

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

  /**
   * `get(id, options?)`, `delete(id, options?)` and other operations on one object by id (or by
   * the path's own name for it: a custom field definition's `{key}`).
   */
  protected byId<P extends PathsWith<M>, M extends "get" | "delete">(method: M, path: P) {
    return (id: string, options?: RequestOptions) =>
      call<ResultOf<OperationOf<P, M>>>(this.context, method, path, { pathParams: named(path, id) }, options);
  }

  /** `create(body, options?)`: a POST to a collection. */
  protected creator<P extends PathsWith<"post">>(path: P) {
    return (body: BodyOf<OperationOf<P, "post">>, options?: RequestOptions) =>
      call<ResultOf<OperationOf<P, "post">>>(this.context, "post", path, { body }, options);
  }

  /** `create(body?, options?)`: a POST whose body is optional (every field has a default). */
  protected optionalCreator<P extends PathsWith<"post">>(path: P) {
    return (body?: BodyOf<OperationOf<P, "post">>, options?: RequestOptions) =>
      call<ResultOf<OperationOf<P, "post">>>(this.context, "post", path, { body: body ?? {} }, options);
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

  /** `erase(id, options?)`: a POST to an action of one object that takes no body (`…/{id}/erase`). */
  protected bodilessAction<P extends PathsWith<"post">>(path: P) {
    return (id: string, options?: RequestOptions) =>
      call<ResultOf<OperationOf<P, "post">>>(this.context, "post", path, { pathParams: { id } }, options);
  }

  /**
   * `recover(id, body?, options?)`: a recovery started (`202`), never a preview: the operation
   * answers one of two shapes by its `dry_run`, so each gets a method of its own.
   */
  protected recoverer<P extends "/open/v1/webhook-endpoints/{id}/recover">(path: P) {
    return (id: string, body: RecoveryBody = {}, options?: RequestOptions) =>
      call<WebhookRecovery>(this.context, "post", path, { pathParams: { id }, body }, options);
  }

  /** `previewRecovery(id, body?, options?)`: the same operation with `dry_run: true` (`200`). */
  protected recoveryPreviewer<P extends "/open/v1/webhook-endpoints/{id}/recover">(path: P) {
    return (id: string, body: RecoveryBody = {}, options?: RequestOptions) =>
      call<components["schemas"]["WebhookRecoveryPreview"]>(
        this.context,
        "post",
        path,
        { pathParams: { id }, body: { ...body, dry_run: true } },
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
        { pathParams: named(path, id), body },
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

  /**
   * `search(body?, options?)`: a POST whose answer is a page, continued by `next_cursor` sent as
   * the body's `cursor` (awaited: the first page; iterated: every result of every page).
   */
  protected searcher<P extends keyof SearchBodies>(path: P) {
    type Result = ResultOf<OperationOf<P, "post">>;
    return (body?: SearchBodies[P], options?: RequestOptions) =>
      new PagePromise<Result, ItemOf<Result> & { id: string }>((next) =>
        call<Result>(this.context, "post", path, { body: { ...body, ...next } }, options),
      );
  }

  /** `pull(start, options?)`: the pages of an incremental pull (see `Pull`). */
  protected puller<P extends "/open/v1/contacts" | "/open/v1/tickets">(path: P) {
    return (start: PullStart<P>, options?: RequestOptions): Pull<ListResult<P>> =>
      new Pull((next) => call(this.context, "get", path, { query: continued(start, next) }, options));
  }
}

/** The one path parameter of `path` (`{id}`, `{key}`) set to `value`. */
function named(path: string, value: string): Record<string, string> {
  return { [/\{(\w+)\}/.exec(path)?.[1] ?? "id"]: value };
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

/** The body each search takes, its filters typed by the fields of its resource (search.ts). */
type SearchBodies = {
  "/open/v1/contacts/search": ContactSearch;
  "/open/v1/tickets/search": TicketSearch;
};

/** One item of `contacts.batch`: the fields of a contact update (`name` is needed to create one). */
export type ContactBatchItem = components["schemas"]["ContactUpdate"];

/** `contacts.batch`, its `match` narrowed to the keys the API takes (`email`, `phone`, `external_ids.<system>`). */
type ContactBatch = (
  body: { match: "email" | "phone" | `external_ids.${string}`; contacts: ContactBatchItem[] },
  options?: RequestOptions,
) => Promise<ResultOf<OperationOf<"/open/v1/contacts/batch", "post">>>;

/**
 * `contacts.list`'s filters on defined custom fields, as the API takes them:
 * `{ "custom_fields.seats": 10 }` (the spec's `x-query-pattern-parameters`, which generated types
 * cannot carry).
 */
export type CustomFieldFilters = { [name: `custom_fields.${string}`]: string | number | boolean };

type ContactList = (
  query?: QueryOf<OperationOf<"/open/v1/contacts", "get">> & CustomFieldFilters,
  options?: RequestOptions,
) => Listed<"/open/v1/contacts">;

export class Contacts extends Resource {
  /**
   * List contacts.
   *
   * Returns the workspace's contacts, newest first; with `updated_after` or `cursor`, an
   * incremental pull instead, oldest change first (see *Incremental pull*). All filters can be
   * combined. `search` matches word prefixes of the name, the email and the phone's digits
   * (see the `search` parameter); `email` matches the whole address case-insensitively. Looking a contact up by `email` before writing (a typical sync)
   * needs `contacts:read` in addition to `contacts:write`.
   *
   * Defined custom fields filter too: `custom_fields.<key>=<value>` (see
   * `x-query-pattern-parameters`; several AND), the value read by the key's type.
   *
   * **Checked beyond the schema:** `updated_after` and `cursor` exclude each other (one starts a
   * pull, the other continues one), and neither combines with `starting_after`: `400
   * parameter_invalid` naming the second one.
   *
   * Await it for the first page, or `for await` over it for every item, page after page.
   *
   * `GET /open/v1/contacts` (`listContacts`).
   */
  list: ContactList = this.lister("/open/v1/contacts");
  /**
   * Search contacts with filters.
   *
   * Finds contacts by a filter language: `filter_groups` is an OR of groups, each group the AND
   * of its `filters`, and each filter a `field`, an `operator` and a `value` (or `values`, a
   * list, for `in` and `nin`). `query` adds a word-prefix search, as the list's `search` reads
   * it, ANDed with the groups. No group and no `query`: every contact. A search writes
   * nothing: it is safe to repeat and takes no `Idempotency-Key`.
   *
   * Fields (`ContactSearchField`), with their operators:
   * - `name`, `email`, `company`, `source`, `status`, `group`, `gender`,
   *   `lifecycle_stage`, `preferred_channel`, `preferred_language`, `timezone`: `eq neq in nin exists prefix`,
   *   text; `email` and `prefix` ignore letter case.
   * - `phone`: `eq neq in nin exists`, compared in E.164 and read in the workspace's default
   *   country (as the list's `phone` filter reads it).
   * - `tags`, `segments`: `eq` (holds the value), `neq` (does not hold it), `in` (holds any),
   *   `nin` (holds none), `exists` (holds at least one).
   * - `do_not_contact`, `marketing_consent`: `eq neq`, a boolean.
   * - `id`: `eq neq in nin`.
   * - `created_at`, `updated_at`: `eq gt gte lt lte exists`, Unix seconds or an RFC 3339
   *   string.
   * - `custom_fields.<key>`: a key the workspace defines (`listCustomFieldDefinitions`) takes
   *   values of its type (a number written as text reads as one) and its type's operators:
   *   `text` as text above, `number` and `date` `eq neq in nin gt gte lt lte exists`,
   *   `boolean` `eq neq exists`, `select` `eq neq in nin exists`. An undefined key takes
   *   every operator, its values as sent (`gt`… compare numbers with numbers, text with text).
   * - `external_ids.<system>`: `eq neq in nin exists prefix`.
   *
   * `neq` and `nin` also match contacts without the field; `exists` with `value: false` finds
   * only those. Results come in `sort` order (`created_at` newest first unless told), `limit` at
   * a time; `next_cursor` (null on the last page) continues the same search as `cursor`,
   * sent with the same `sort`.
   *
   * **Checked beyond the schema:** a field that is not a contact field, an operator the field
   * does not take, a value of the wrong type, `value` with `in`/`nin` or `values` with another
   * operator, and a `cursor` that is not one of this sort's: `400 parameter_invalid` naming
   * where (e.g. `filter_groups[0].filters[1].value`). `filter_groups` holds at most 5 groups of
   * at most 10 filters; `values` at most 100 (docs/api.md, "Searching").
   *
   * Await it for the first page, or `for await` over it for every result, page after page (`next_cursor` sent for you).
   *
   * `POST /open/v1/contacts/search` (`searchContacts`).
   */
  search = this.searcher("/open/v1/contacts/search");
  /** Every contact changed since `updated_after` or a kept `cursor`, page by page (see `Pull`). */
  pull = this.puller("/open/v1/contacts");
  /**
   * Create a contact.
   *
   * Creates a contact. Only `name` is required; optional fields may be omitted or sent as `null`
   * (unset). `do_not_contact` and `marketing_consent` default to `false`, `tags` and `segments`
   * to `[]`, `custom_fields` and `external_ids` to `{}` (a `null` value inside `custom_fields` is
   * dropped). Emits `contact.created`. To avoid duplicates in a sync, look the contact up first
   * (list with `email`, which needs `contacts:read` as well) or send an `Idempotency-Key`.
   *
   * **Checked beyond the schema:** `phone` must read as a phone number (libphonenumber-js: it
   * parses, and its length is possible for its country), in `phone_country` or the workspace's
   * default country when it does not start with `+`, unless the workspace's `phone_validation`
   * is `lenient`; and `phone_country` must name a country that has phone numbers: `400
   * parameter_invalid` naming `phone` or `phone_country`.
   *
   * `POST /open/v1/contacts` (`createContact`).
   */
  create = this.creator("/open/v1/contacts");
  /**
   * Retrieve a contact.
   *
   * Returns one contact of the workspace.
   *
   * `GET /open/v1/contacts/{id}` (`getContact`).
   */
  get = this.byId("get", "/open/v1/contacts/{id}");
  /**
   * Update a contact.
   *
   * Changes only the fields sent. `null` clears an optional field (`tags`/`segments` become
   * `[]`, `do_not_contact`/`marketing_consent` become `false`, `custom_fields`/`external_ids`
   * become `{}`); `name` cannot be cleared. `custom_fields` and `external_ids` merge per key
   * (RFC 7396: a `null` value removes that key); `tags`, `segments` and `address` are replaced
   * whole. Emits `contact.updated` with `previous_attributes` when something changed; a PATCH
   * that changes nothing returns `200` and emits no event.
   *
   * **Checked beyond the schema:** `phone` must read as a phone number (libphonenumber-js: it
   * parses, and its length is possible for its country), in `phone_country` or the workspace's
   * default country when it does not start with `+`, unless the workspace's `phone_validation`
   * is `lenient`; and `phone_country` must name a country that has phone numbers: `400
   * parameter_invalid` naming `phone` or `phone_country`.
   *
   * `PATCH /open/v1/contacts/{id}` (`updateContact`).
   */
  update = this.updater("/open/v1/contacts/{id}");
  /**
   * Delete a contact.
   *
   * Removes the contact. Tickets and conversations that reference it keep its id. Deleting it
   * again is `404 resource_missing`.
   *
   * `DELETE /open/v1/contacts/{id}` (`deleteContact`).
   */
  delete = this.byId("delete", "/open/v1/contacts/{id}");
  /**
   * Create or update up to 100 contacts.
   *
   * Upserts up to 100 contacts in one request, each found by the `match` key: `email`
   * (case-insensitive), `phone` (compared in E.164, read as `createContact` reads it; where
   * several contacts share the number, the oldest is the match) or `external_ids.<system>`
   * (e.g. `external_ids.salesforce`). Every item
   * must carry its match value. An item whose contact does not exist yet is created (`name`
   * required; emits `contact.created`); one that exists is updated with PATCH semantics
   * (`updateContact`: only the fields sent, only what differs; emits `contact.updated` with
   * `previous_attributes`) or left `unchanged` (no write, no event).
   *
   * The answer is `200` with one result per item, **in input order**: `created`, `updated` or
   * `unchanged` with the contact, or `error` with the error object (`type`, `code`, `message`,
   * `param`) the same item would have got alone, e.g. `parameter_missing`, `parameter_invalid`,
   * `email_taken`, `external_id_taken`, `concurrent_update`. One failing item never fails the
   * others. Items with the same match value are applied in input order; concurrent batches
   * that touch the same contacts never create duplicates (the match value is unique) nor lose
   * an update (each update applies to the version it was decided on). With an
   * `Idempotency-Key` the whole batch is replayed, results included, without a second write.
   *
   * **Checked beyond the schema:** each item is an open object (so that a wrong item gets its own
   * `error` result), but the request as a whole, like every request, may carry no number beyond
   * ±(2^53 − 1) (JSON readers cannot hold it exactly) and no string with a NUL or a lone
   * surrogate, wherever it sits in an item: `400 parameter_invalid` naming where.
   *
   * `POST /open/v1/contacts/batch` (`batchUpsertContacts`).
   */
  batch: ContactBatch = this.creator("/open/v1/contacts/batch");
  /**
   * Merge contacts into this one.
   *
   * Merges the contacts of `contact_ids` into the contact of the path (the survivor): their
   * tickets and conversations are re-pointed to the survivor (each ticket emits
   * `ticket.updated`), `tags`, `segments` and `external_ids` are unioned, the survivor's empty
   * fields are filled from them (in `contact_ids` order; `custom_fields` per key), the merged
   * contacts are deleted (their tombstones in an incremental pull name the survivor in
   * `merged_into`), and `contact.updated` with `previous_attributes` is emitted for the
   * survivor. Answers the survivor.
   *
   * Two different values for the same external-id system are a conflict: `409 merge_conflict`
   * naming every conflicting system (`param` is the first, `external_ids.<system>`), and
   * nothing changes, unless `prefer` names the contact (the survivor or one of `contact_ids`)
   * whose values win. The same holds for two different emails when the survivor has none.
   *
   * A merge is safe to retry: repeating it after a failure or a crash completes it (contacts
   * already merged into this survivor count as merged), and repeating a completed one answers
   * the survivor unchanged.
   *
   * **Checked beyond the schema:** `prefer` must be the survivor or one of `contact_ids`,
   * otherwise `400 parameter_invalid` (`param` is `prefer`); every id of `contact_ids` must be
   * a contact of the workspace (or one merged into this survivor already), otherwise
   * `400 parameter_invalid` (`param` is `contact_ids`). Only an unknown survivor (the path's
   * id) is `404 resource_missing`.
   *
   * `POST /open/v1/contacts/{id}/merge` (`mergeContacts`).
   */
  merge = this.action("/open/v1/contacts/{id}/merge");
  /**
   * Erase a contact's personal data.
   *
   * Removes the contact's personal data everywhere the service keeps it (the right to
   * erasure): the contact is deleted (an incremental pull lists its tombstone, which keeps only
   * its id and times), the `data` of every stored event about it becomes an `ErasedContact`
   * marker (and a `contact.updated`'s `previous_attributes` becomes `{}`), the receivers'
   * answers kept with those events' delivery attempts are emptied, and stored answers of
   * idempotent requests that carried it are dropped (a replay is `409
   * idempotency_replay_unavailable`). Ids, types and times stay, so the event log, deliveries
   * and recoveries still line up; a later resend or recovery delivers the marker. Tickets and
   * conversations keep its id in `contact_id`. Emits `contact.erased`, whose `data` is the
   * marker, so receivers erase their own copies.
   *
   * Safe to repeat: erasing an erased contact answers the same and changes nothing more; after
   * a failure, repeating it completes it. A contact deleted earlier (while its tombstone is
   * kept: `EVENT_RETENTION_DAYS`) can still be erased; its copies are scrubbed the same way. An
   * id the workspace never had, or whose tombstone is gone, is `404 resource_missing`.
   *
   * `POST /open/v1/contacts/{id}/erase` (`eraseContact`).
   */
  erase = this.bodilessAction("/open/v1/contacts/{id}/erase");
}

export class Tickets extends Resource {
  /**
   * List tickets.
   *
   * Returns the workspace's tickets, newest first; with `updated_after` or `cursor`, an
   * incremental pull instead, oldest change first (see *Incremental pull*). All filters can be
   * combined.
   *
   * **Checked beyond the schema:** `updated_after` and `cursor` exclude each other (one starts a
   * pull, the other continues one), and neither combines with `starting_after`: `400
   * parameter_invalid` naming the second one.
   *
   * Await it for the first page, or `for await` over it for every item, page after page.
   *
   * `GET /open/v1/tickets` (`listTickets`).
   */
  list = this.lister("/open/v1/tickets");
  /**
   * Search tickets with filters.
   *
   * Finds tickets by a filter language: `filter_groups` is an OR of groups, each group the AND
   * of its `filters`, and each filter a `field`, an `operator` and a `value` (or `values`, a
   * list, for `in` and `nin`). No group: every ticket. A search writes nothing: it is safe to
   * repeat and takes no `Idempotency-Key`.
   *
   * Fields (`TicketSearchField`), with their operators:
   * - `status`, `priority`, `sentiment`: `eq neq in nin exists`, one of the field's values.
   * - `subject`, `type`, `category`, `assignee_id`, `language`: `eq neq in nin exists prefix`,
   *   text; `prefix` ignores letter case.
   * - `contact_id`, `conversation_id`: `eq neq in nin exists`.
   * - `tags`: `eq` (holds the value), `neq` (does not hold it), `in` (holds any), `nin` (holds
   *   none), `exists` (holds at least one).
   * - `id`: `eq neq in nin`.
   * - `created_at`, `updated_at`, `due_at`, `solved_at`, `closed_at`: `eq gt gte lt lte
   *   exists`, Unix seconds or an RFC 3339 string.
   *
   * `neq` and `nin` also match tickets without the field; `exists` with `value: false` finds
   * only those. Results come in `sort` order (`created_at` newest first unless told), `limit` at
   * a time; `next_cursor` (null on the last page) continues the same search as `cursor`,
   * sent with the same `sort`.
   *
   * **Checked beyond the schema:** a field that is not a ticket field, an operator the field
   * does not take, a value of the wrong type, `value` with `in`/`nin` or `values` with another
   * operator, and a `cursor` that is not one of this sort's: `400 parameter_invalid` naming
   * where (e.g. `filter_groups[0].filters[1].value`). `filter_groups` holds at most 5 groups of
   * at most 10 filters; `values` at most 100 (docs/api.md, "Searching").
   *
   * Await it for the first page, or `for await` over it for every result, page after page (`next_cursor` sent for you).
   *
   * `POST /open/v1/tickets/search` (`searchTickets`).
   */
  search = this.searcher("/open/v1/tickets/search");
  /** Every ticket changed since `updated_after` or a kept `cursor`, page by page (see `Pull`). */
  pull = this.puller("/open/v1/tickets");
  /**
   * Create a ticket.
   *
   * Creates a ticket. Only `subject` is required; `status` defaults to `New`. Creating a ticket
   * directly in a terminal status stamps `solved_at` (`Solved`) or `closed_at` (`Closed`,
   * `Cancelled`). Emits `ticket.created`.
   *
   * **Checked beyond the schema:** `contact_id` and `conversation_id` must name a contact and a
   * conversation of the API key's workspace: an unknown or foreign id is `400
   * parameter_invalid` with `param` naming the field.
   *
   * `POST /open/v1/tickets` (`createTicket`).
   */
  create = this.creator("/open/v1/tickets");
  /**
   * Retrieve a ticket.
   *
   * Returns one ticket of the workspace.
   *
   * `GET /open/v1/tickets/{id}` (`getTicket`).
   */
  get = this.byId("get", "/open/v1/tickets/{id}");
  /**
   * Update a ticket.
   *
   * Changes only the fields sent, e.g. `{"status": "Solved"}`. `null` clears an optional field
   * (`tags` becomes `[]`); `subject` and `status` cannot be cleared. `tags` is replaced whole.
   *
   * **Checked beyond the schema:** `contact_id` and `conversation_id` must name a contact and a
   * conversation of the API key's workspace: an unknown or foreign id is `400
   * parameter_invalid` with `param` naming the field.
   *
   * **Status machine.** `New`, `On you`, `On customer` and `On hold` are non-terminal and move
   * freely among themselves and to any terminal status. `Solved`, `Closed` and `Cancelled` are
   * terminal: `Solved` may still move to `Closed`; `Closed` and `Cancelled` move nowhere. Any
   * other move is `409 ticket_status_terminal`. Setting the current status again is a no-op.
   * Entering `Solved` stamps `solved_at`; entering `Closed` or `Cancelled` stamps `closed_at`; a
   * stamp is never cleared or moved.
   *
   * | From | To | Result |
   * |---|---|---|
   * | `New`, `On you`, `On customer`, `On hold` | any status | allowed |
   * | `Solved` | `Closed` | allowed, stamps `closed_at` |
   * | `Solved` | any other status but `Solved` | `409 ticket_status_terminal` |
   * | `Closed`, `Cancelled` | any other status | `409 ticket_status_terminal` |
   *
   * Emits `ticket.updated` with `previous_attributes` when something changed; a PATCH that
   * changes nothing returns `200` and emits no event.
   *
   * `PATCH /open/v1/tickets/{id}` (`updateTicket`).
   */
  update = this.updater("/open/v1/tickets/{id}");
  /**
   * Delete a ticket.
   *
   * Removes the ticket, whatever its status. Deleting it again is `404 resource_missing`.
   *
   * `DELETE /open/v1/tickets/{id}` (`deleteTicket`).
   */
  delete = this.byId("delete", "/open/v1/tickets/{id}");
}

export class Messages extends Resource {
  /**
   * List a conversation's messages.
   *
   * Returns the messages of the conversation, internal notes included, newest first.
   *
   * Await it for the first page, or `for await` over it for every item, page after page.
   *
   * `GET /open/v1/conversations/{id}/messages` (`listMessages`).
   */
  list = this.nestedLister("/open/v1/conversations/{id}/messages");
  /**
   * Send a message.
   *
   * Adds an agent message to the conversation (`direction: "outbound"`, `author_type: "api"`),
   * or an internal note when `internal_note` is `true` (never shown to the customer). A message
   * that is not an internal note marks the conversation read (`unread: false`); every message
   * updates `last_message_at`. The conversation's status does not change (a closed conversation
   * stays closed). No event is emitted: `message.received` is for customer messages only.
   *
   * `POST /open/v1/conversations/{id}/messages` (`sendMessage`).
   */
  create = this.nestedCreator("/open/v1/conversations/{id}/messages");
  /** Same as `create`: the spec's `sendMessage`. */
  send = this.create;
}

export class Conversations extends Resource {
  /**
   * List conversations.
   *
   * Returns the workspace's conversations, newest first. All filters can be combined.
   *
   * Await it for the first page, or `for await` over it for every item, page after page.
   *
   * `GET /open/v1/conversations` (`listConversations`).
   */
  list = this.lister("/open/v1/conversations");
  /**
   * Retrieve a conversation.
   *
   * Returns one conversation of the workspace.
   *
   * `GET /open/v1/conversations/{id}` (`getConversation`).
   */
  get = this.byId("get", "/open/v1/conversations/{id}");
  readonly messages = new Messages(this.context);
}

export class WebhookEndpoints extends Resource {
  /**
   * List webhook endpoints.
   *
   * Returns the workspace's webhook endpoints, newest first, disabled ones included. The
   * `secret` is never returned here. Each carries `recent_deliveries`: how its latest 100
   * deliveries went (success rate, last attempt), read with the page, so a list of endpoints
   * with their health is one request.
   *
   * Await it for the first page, or `for await` over it for every item, page after page.
   *
   * `GET /open/v1/webhook-endpoints` (`listWebhookEndpoints`).
   */
  list = this.lister("/open/v1/webhook-endpoints");
  /**
   * Create a webhook endpoint.
   *
   * Registers an HTTPS endpoint for the given event types; `events` omitted means all types
   * (`["*"]`, which also covers types added later). Unknown types are `400 parameter_invalid`.
   * The response contains the signing `secret` (`whsec_…`) this once; store it to verify
   * deliveries. With `signing: "ed25519"` the endpoint signs with an Ed25519 key pair instead:
   * `secret` is `null` (the private key is never shown) and `public_key` (`whpk_…`, shown by
   * every answer about the endpoint) verifies its `v1a` signatures. A host name in `url` is checked against the refused address ranges each time a
   * delivery connects, and a delivery to such an address fails (unless the deployment allows
   * private networks for development).
   *
   * **Checked beyond the schema:** a `url` whose host is an IP address in a special-purpose
   * range (loopback, private, shared, link-local and cloud metadata, documentation,
   * benchmarking, multicast, reserved, unique-local, and IPv6 forms of such IPv4 addresses) is
   * `400 url_address_refused` with `param` `url` (unless the deployment allows private
   * networks); a host that WHATWG URL parsing refuses (`999.1.1.1`) is `400 parameter_invalid`;
   * an `http://` URL is `400 parameter_invalid` with `param` `url` unless the deployment allows
   * private networks and its host is loopback (a receiver on the developer's machine);
   * a custom header a delivery sets itself (`headers.Host`), or two whose names differ only in
   * case, are `400 parameter_invalid` with `param` naming the header. A workspace has at most
   * 100 endpoints (a deployment's setting): one more is `409 webhook_endpoint_limit_reached`.
   *
   * **Replays:** with an `Idempotency-Key`, the answer is kept for its replay; the `secret` in it
   * is kept sealed like the endpoint's own copy (encrypted when the deployment sets an
   * encryption key), and the replay shows it again.
   *
   * `POST /open/v1/webhook-endpoints` (`createWebhookEndpoint`).
   */
  create = this.creator("/open/v1/webhook-endpoints");
  /**
   * Retrieve a webhook endpoint.
   *
   * Returns one webhook endpoint of the workspace. The `secret` is never returned here.
   *
   * `GET /open/v1/webhook-endpoints/{id}` (`getWebhookEndpoint`).
   */
  get = this.byId("get", "/open/v1/webhook-endpoints/{id}");
  /**
   * Update a webhook endpoint.
   *
   * Changes only the fields sent: `url` (HTTPS, as on create), `description` (`null` clears it), `events`
   * (replaced whole), `headers` (merged by name: a value sets a header, `null` removes it) and
   * `status`. `status: "disabled"` pauses deliveries (`disabled_reason`
   * `owner`); `status: "enabled"` resumes them and resets `consecutive_failures`
   * to 0, also for an endpoint that deliveries disabled. Deliveries that were due while it was
   * disabled are `dropped`, and events of that time make none: enabling does not resend them,
   * `recoverWebhookEndpoint` does. A PATCH that changes nothing
   * returns `200`. The `secret` is never returned here (see `rotateWebhookEndpointSecret`).
   *
   * **Checked beyond the schema:** `url` as on create: an IP-address host in a refused range is
   * `400 url_address_refused` (`param` `url`), a host that WHATWG URL parsing refuses and an
   * `http://` URL (but to loopback where private networks are allowed) are
   * `400 parameter_invalid`; `headers` as on create, and more than 20 once merged is
   * `400 parameter_invalid` (`param` `headers`).
   *
   * `PATCH /open/v1/webhook-endpoints/{id}` (`updateWebhookEndpoint`).
   */
  update = this.updater("/open/v1/webhook-endpoints/{id}");
  /**
   * Delete a webhook endpoint.
   *
   * Removes the endpoint; its pending deliveries stop.
   *
   * `DELETE /open/v1/webhook-endpoints/{id}` (`deleteWebhookEndpoint`).
   */
  delete = this.byId("delete", "/open/v1/webhook-endpoints/{id}");
  /**
   * Rotate the signing secret.
   *
   * Makes a new signing secret and returns it this once. For a grace period of `expires_in`
   * seconds (default 86400, i.e. 24 hours; `0` ends it now) the previous secret stays valid:
   * deliveries carry one `v1=` signature per valid secret, so receivers verifying with either
   * secret keep working while they switch. Rotating again during a grace period shortens the
   * grace of older secrets to the new `expires_in`, never lengthens it. An endpoint has at most 5
   * live secrets (a deployment's setting): a rotation past that ends the oldest grace periods
   * now, so deliveries never carry more signatures than receivers read.
   *
   * An Ed25519 endpoint gets a new key pair: `secret` is `null`, `public_key` the new key, and
   * deliveries carry one `v1a` per live key pair. `signing` switches the scheme at a rotation
   * (the only place it changes): the new secret or key pair is of that scheme, and during the
   * grace deliveries carry both a `v1` and a `v1a`, so receivers move over without a gap.
   * Omitted, it keeps the endpoint's scheme.
   *
   * **Replays:** with an `Idempotency-Key`, the new `secret` is kept for the replay sealed like
   * the endpoint's own copy, and the replay shows it again.
   *
   * `POST /open/v1/webhook-endpoints/{id}/rotate-secret` (`rotateWebhookEndpointSecret`).
   */
  rotateSecret = this.action("/open/v1/webhook-endpoints/{id}/rotate-secret");
  /**
   * List an endpoint's delivery attempts.
   *
   * Every HTTP attempt to deliver an event to this endpoint, newest first: the attempt number
   * (1, then up to 4 retries), the endpoint's HTTP status, how long it took, and why it failed
   * (`HTTP 503`, `timeout after 10000 ms`, `redirect not followed (HTTP 302)`, `connection
   * refused`, `address refused: …` for a private address). Use it to see why deliveries fail.
   * Attempts are kept 90 days by default (`ATTEMPT_RETENTION_DAYS`, at most as long as
   * deliveries). `delivery_id` narrows the list to one delivery's
   * attempts (a delivery of another endpoint, or none, gives an empty list).
   *
   * Await it for the first page, or `for await` over it for every item, page after page.
   *
   * `GET /open/v1/webhook-endpoints/{id}/attempts` (`listWebhookEndpointAttempts`).
   */
  listAttempts = this.nestedLister("/open/v1/webhook-endpoints/{id}/attempts");
  /**
   * List an endpoint's deliveries.
   *
   * Every delivery of an event to this endpoint, newest first: one per queueing (the event
   * happening, `resendEvent`, `recoverWebhookEndpoint`), each with its status (`pending`,
   * `succeeded`, `failed` when its retries ran out, `dropped` when the endpoint was disabled or
   * paused while it was due), how many attempts it made and how the last one went. Filters
   * combine: `status`, `event_type`, `recovery_id` (the deliveries one `recoverWebhookEndpoint`
   * queued), and `created_after`/`created_before` (exclusive, on when the delivery was queued).
   * Settled deliveries are kept 90 days by default (`DELIVERY_RETENTION_DAYS`, at least as
   * long as events): one whose event is past retention is still listed, but can no longer be
   * resent. The attempts behind a delivery are in
   * `listWebhookEndpointAttempts` (`delivery_id` narrows it to one delivery's).
   *
   * Await it for the first page, or `for await` over it for every item, page after page.
   *
   * `GET /open/v1/webhook-endpoints/{id}/deliveries` (`listWebhookEndpointDeliveries`).
   */
  deliveries = this.nestedLister("/open/v1/webhook-endpoints/{id}/deliveries");
  /**
   * Count an endpoint's recent deliveries.
   *
   * How the endpoint's deliveries of the last 24 hours went, by status, in total and per hour:
   * 24 clock hours (UTC), oldest first, each counting the deliveries queued in that hour; the
   * last is the current hour, so `until` is when it ends. The success rate of the window is
   * `succeeded / (succeeded + failed)`. What the webhook console charts; the deliveries
   * themselves are in `listWebhookEndpointDeliveries`.
   *
   * `GET /open/v1/webhook-endpoints/{id}/stats` (`getWebhookEndpointStats`).
   */
  stats = this.byId("get", "/open/v1/webhook-endpoints/{id}/stats");
  /**
   * Recover the deliveries an endpoint missed.
   *
   * Starts a recovery, which queues, oldest event first, one delivery of every event of the
   * window that the endpoint subscribes to and that has no `succeeded` delivery to it:
   * deliveries that failed, were dropped, or were never made because the endpoint was disabled
   * when the event happened. Only what the endpoint missed: never an event older than the
   * endpoint itself, nor one older than its subscription to the event's type (a type added to
   * `events` later counts from then). The answer comes at once, with the recovery `queued`; the
   * deployment's workers then page through the window, queueing deliveries as they go, and
   * `getWebhookRecovery` shows its `status` and counts. A recovery a worker was running when it
   * stopped is taken up again where it was.
   * The window holds the events whose `created` is at or after `since` (to the second) and at
   * or before `until` (default: now; a later `until` means now); `since` may go back at most
   * the event retention (30 days by default), and a `since` before the endpoint was created
   * starts at its creation. Without `since`, the window starts at the endpoint's first failure
   * since it was last healthy: the event of its oldest `failed` or `dropped` delivery after its
   * newest `succeeded` one (none: `400 parameter_missing` naming `since`).
   *
   * **Preview:** with `dry_run: true` nothing is queued: the answer is `200` with the window and
   * what a recovery of it would do now, `would_queue` counted by reason (`failed`, `dropped`,
   * `never_sent`) and the events it would leave alone (`skipped`: already `succeeded`, already
   * `pending`, or older than the endpoint's subscription to their type). A recovery started
   * right after, with nothing delivered in between, queues `would_queue.total`. Each delivery carries the event's stored bytes
   * and its id (`Service-Delivery`, `webhook-id`), signed anew, with the normal retries.
   *
   * Safe to repeat: an event that already has a pending delivery to the endpoint is not queued
   * again, so `queued` counts only the deliveries this recovery made. One recovery of an
   * endpoint runs at a time (a deployment's setting): another while it is `queued` or `running`
   * is `409 webhook_recovery_in_progress` naming it. The endpoint must be enabled
   * (`updateWebhookEndpoint` with `status: "enabled"`) first; a disabled one is `409
   * webhook_endpoint_disabled`. After an outage: enable the endpoint, then
   * recover since the first failure.
   *
   * **Checked beyond the schema:** the window may not end before it starts (`until` before
   * `since`, or `since` in the future without `until`), and `since` may go back at most the
   * event retention: `400 parameter_invalid` naming `until` or `since`.
   *
   * Starts the recovery; `previewRecovery` is the dry run.
   *
   * `POST /open/v1/webhook-endpoints/{id}/recover` (`recoverWebhookEndpoint`).
   */
  recover = this.recoverer("/open/v1/webhook-endpoints/{id}/recover");
  /**
   * Recover the deliveries an endpoint missed.
   *
   * Starts a recovery, which queues, oldest event first, one delivery of every event of the
   * window that the endpoint subscribes to and that has no `succeeded` delivery to it:
   * deliveries that failed, were dropped, or were never made because the endpoint was disabled
   * when the event happened. Only what the endpoint missed: never an event older than the
   * endpoint itself, nor one older than its subscription to the event's type (a type added to
   * `events` later counts from then). The answer comes at once, with the recovery `queued`; the
   * deployment's workers then page through the window, queueing deliveries as they go, and
   * `getWebhookRecovery` shows its `status` and counts. A recovery a worker was running when it
   * stopped is taken up again where it was.
   * The window holds the events whose `created` is at or after `since` (to the second) and at
   * or before `until` (default: now; a later `until` means now); `since` may go back at most
   * the event retention (30 days by default), and a `since` before the endpoint was created
   * starts at its creation. Without `since`, the window starts at the endpoint's first failure
   * since it was last healthy: the event of its oldest `failed` or `dropped` delivery after its
   * newest `succeeded` one (none: `400 parameter_missing` naming `since`).
   *
   * **Preview:** with `dry_run: true` nothing is queued: the answer is `200` with the window and
   * what a recovery of it would do now, `would_queue` counted by reason (`failed`, `dropped`,
   * `never_sent`) and the events it would leave alone (`skipped`: already `succeeded`, already
   * `pending`, or older than the endpoint's subscription to their type). A recovery started
   * right after, with nothing delivered in between, queues `would_queue.total`. Each delivery carries the event's stored bytes
   * and its id (`Service-Delivery`, `webhook-id`), signed anew, with the normal retries.
   *
   * Safe to repeat: an event that already has a pending delivery to the endpoint is not queued
   * again, so `queued` counts only the deliveries this recovery made. One recovery of an
   * endpoint runs at a time (a deployment's setting): another while it is `queued` or `running`
   * is `409 webhook_recovery_in_progress` naming it. The endpoint must be enabled
   * (`updateWebhookEndpoint` with `status: "enabled"`) first; a disabled one is `409
   * webhook_endpoint_disabled`. After an outage: enable the endpoint, then
   * recover since the first failure.
   *
   * **Checked beyond the schema:** the window may not end before it starts (`until` before
   * `since`, or `since` in the future without `until`), and `since` may go back at most the
   * event retention: `400 parameter_invalid` naming `until` or `since`.
   *
   * The dry run (`dry_run: true`, sent for you): the preview, and nothing queued.
   *
   * `POST /open/v1/webhook-endpoints/{id}/recover` (`recoverWebhookEndpoint`).
   */
  previewRecovery = this.recoveryPreviewer("/open/v1/webhook-endpoints/{id}/recover");
  /**
   * Send a test event to an endpoint.
   *
   * Sends the catalog's example of `event_type` (`listEventTypes`; the example is the one in
   * this spec's `webhooks` section, with a new event id and `created`) to this endpoint only,
   * signed, through the normal delivery path with its retries, and marked `test: true` in the
   * body so a receiver can tell it from a real one. Any type of the catalog may be sent,
   * whether or not the endpoint subscribes to it. The test event is kept and listed like any
   * event (`listEvents`, with its `test: true`); a resend of it goes to this endpoint only, and
   * no recovery queues it. Answers the delivery queued (`202`); follow it with
   * `listWebhookEndpointDeliveries` and its attempts with `listWebhookEndpointAttempts`.
   * The endpoint must be enabled: a disabled one is `409 webhook_endpoint_disabled`.
   *
   * `POST /open/v1/webhook-endpoints/{id}/test` (`sendWebhookEndpointTestEvent`).
   */
  sendTestEvent = this.nestedCreator("/open/v1/webhook-endpoints/{id}/test");
  /**
   * Resend up to 100 deliveries.
   *
   * Queues each chosen delivery's event again to that delivery's endpoint, as `resendEvent`
   * with its `endpoint_id` does: the same bytes and event id, signed anew, the normal retries.
   * Up to 100 delivery ids (`dlv_…`) of any endpoints of the workspace, each at most once.
   * The answer is `200` with one result per id, **in input order**: `queued` with the new
   * delivery; `already_pending` when the event already has a pending delivery to the endpoint
   * (it is left to go, nothing is queued twice); or `error` with the error object the id
   * would have got alone: `resource_missing` (no such delivery in the workspace, or its event
   * is past the retention), `webhook_endpoint_disabled` (enable the endpoint first). One
   * failing id never fails the others. More than 100 ids is `400 parameter_invalid` naming
   * `ids`, and nothing is queued.
   *
   * `POST /open/v1/webhook-deliveries/resend` (`resendWebhookDeliveries`).
   */
  resendDeliveries = this.creator("/open/v1/webhook-deliveries/resend");
  /**
   * List the deliveries of several events.
   *
   * The deliveries of up to 100 events at once, to every endpoint, newest first: what
   * `listEventDeliveries` answers for one event, for a whole page of `listEvents` in one
   * request (the webhook console's "Delivered to" column). `event_id` is required and may
   * repeat (`event_id=evt_…&event_id=evt_…`), each an event of the workspace; an id of no
   * event of the workspace (another workspace's, or past retention) matches nothing. More than
   * 100 ids is `400 parameter_invalid` naming `event_id`. A page holds up to `limit`
   * deliveries of all the events together: follow `has_more` for the rest.
   *
   * Await it for the first page, or `for await` over it for every item, page after page.
   *
   * `GET /open/v1/webhook-deliveries` (`listWebhookDeliveries`).
   */
  listDeliveries = this.lister("/open/v1/webhook-deliveries");
  /**
   * Get a recovery.
   *
   * A recovery started by `recoverWebhookEndpoint`, with its progress: `status` (`queued`,
   * `running`, `succeeded`), how many events of the window it has read (`scanned`), how many
   * deliveries it has queued (`queued`) and how those deliveries stand now (`deliveries`, by
   * status). Poll it until `succeeded` and then until `deliveries.pending` is 0.
   *
   * `GET /open/v1/webhook-recoveries/{id}` (`getWebhookRecovery`).
   */
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
/** The window of a recovery (`since`, `until`); `dry_run` is what tells `recover` from `previewRecovery`. */
type RecoveryBody = Omit<components["schemas"]["WebhookRecoveryCreate"], "dry_run">;

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
  /**
   * List events.
   *
   * Returns the workspace's events of the last 30 days (by default; the deployment's
   * `EVENT_RETENTION_DAYS`), newest first, whether or not any endpoint received them: the way
   * to catch up after an outage. Filters combine: `type` may repeat (any of them matches),
   * `created_after` and `created_before` are exclusive and compare with the event's `created`.
   * Each event is exactly the body a webhook delivery carries.
   *
   * Await it for the first page, or `for await` over it for every item, page after page.
   *
   * `GET /open/v1/events` (`listEvents`).
   */
  list = this.lister("/open/v1/events");
  /**
   * Retrieve an event.
   *
   * Returns one event of the workspace, exactly as webhook deliveries carry it, while it is kept (30 days by default, `EVENT_RETENTION_DAYS`); an older one is `404` `resource_missing`, even before the hourly sweep removes it.
   *
   * `GET /open/v1/events/{id}` (`getEvent`).
   */
  get = this.byId("get", "/open/v1/events/{id}");
  /**
   * Resend an event.
   *
   * Queues a new delivery of the event, with the normal retries: to `endpoint_id`, or, without
   * it, to every enabled endpoint subscribed to the event's type (but the one an operational
   * event is about). It carries the same bytes and
   * the same event id (`Service-Delivery`, `webhook-id`) as the first delivery, signed anew, so
   * receivers that drop duplicates by event id stay correct. An endpoint that already has a
   * pending delivery of the event is left to it (not queued twice). `202` with the deliveries
   * queued. An event past retention is `404`; a disabled `endpoint_id` is
   * `409 webhook_endpoint_disabled`.
   *
   * **Checked beyond the schema:** `endpoint_id` must name an endpoint subscribed to the event's
   * type (or `*`), and not the endpoint an operational event is about: `400 parameter_invalid`
   * naming `endpoint_id`.
   *
   * `POST /open/v1/events/{id}/resend` (`resendEvent`).
   */
  resend = this.action("/open/v1/events/{id}/resend");
  /**
   * List an event's deliveries.
   *
   * Every delivery of this event, to every endpoint, newest first: one per queueing (the event
   * happening, `resendEvent`, `recoverWebhookEndpoint`), each with its status and how its last
   * attempt went. An endpoint that was disabled when the event happened has none (see
   * `recoverWebhookEndpoint`). An event past retention is `404`.
   *
   * Await it for the first page, or `for await` over it for every item, page after page.
   *
   * `GET /open/v1/events/{id}/deliveries` (`listEventDeliveries`).
   */
  deliveries = this.nestedLister("/open/v1/events/{id}/deliveries");
  /**
   * List event types.
   *
   * The catalog of every event type a webhook endpoint can subscribe to: what each means, the
   * JSON Schema (2020-12) of the body its deliveries carry, and whether it is *operational*
   * (about the webhooks themselves, such as `webhook_endpoint.disabled`) rather than about a
   * resource. Taken from this document's `webhooks` section, so it never disagrees with it.
   * One page holds them all (`has_more` is `false`).
   *
   * `GET /open/v1/event-types` (`listEventTypes`).
   */
  types = this.reader("/open/v1/event-types");
}

export class ConsoleLinks extends Resource {
  /**
   * Get a link to the webhook console.
   *
   * Makes a one-time link to the webhook console (`/console/`) for the key's own workspace,
   * for a person who owns its integrations: no API key reaches their browser, and no operator
   * is needed. Opening `url` exchanges the token in its fragment (which never reaches a server
   * log) for a session cookie; the link works once, and only until `link_expires_at` (10
   * minutes, or the session's end if sooner). The session ends at `expires_at`: `expires_in`
   * seconds after this request (by default the deployment's `CONSOLE_SESSION_TTL_MINUTES`, 1
   * hour), however late the link is opened. It can do what a key with `webhooks:manage` can, in
   * this workspace only.
   *
   * `url` starts with the deployment's `CONSOLE_PUBLIC_URL`; without it, with the scheme and
   * `Host` the request came by, taken only when it names this machine (`localhost`,
   * `127.0.0.1`, `[::1]`, …): any other `Host` is `409 console_public_url_required`. The
   * link's token is never stored, not even for an `Idempotency-Key`: a repeat of the request
   * is `409 idempotency_replay_unavailable`; ask for another link. A console session cannot
   * ask for links (`403 insufficient_scope`): only an API key can.
   *
   * `POST /open/v1/console-sessions` (`createConsoleLink`).
   */
  create = this.optionalCreator("/open/v1/console-sessions");
}

export class CustomFieldDefinitions extends Resource {
  /**
   * List custom field definitions.
   *
   * Returns every custom field definition of the workspace, newest first, in one page (a
   * workspace has at most 100: `has_more` is always `false`).
   *
   * `GET /open/v1/custom-field-definitions` (`listCustomFieldDefinitions`).
   */
  list = this.reader("/open/v1/custom-field-definitions");
  /**
   * Define a custom field.
   *
   * Defines a key of contacts' `custom_fields` with a type: from then on every contact write
   * (create, update, batch upsert, merge) checks that key's value against it (`400
   * parameter_invalid` with `param: custom_fields.<key>`), and the contact list filters on it
   * (`custom_fields.<key>=…`). Values stored before are left as they are. `searchable: true`
   * keeps a database index for the key, so its filters stay fast on large workspaces.
   *
   * **Checked beyond the schema:** `options` is required with type `select` (at least one) and
   * refused with any other type (`400 parameter_invalid`, `param: options`); a key the workspace
   * has defined already is `409 custom_field_key_taken`; a workspace has at most 100
   * definitions, and the whole deployment indexes at most 32 distinct searchable keys (each is a
   * database index): one more is `409 custom_field_limit_reached`.
   *
   * `POST /open/v1/custom-field-definitions` (`createCustomFieldDefinition`).
   */
  create = this.creator("/open/v1/custom-field-definitions");
  /**
   * Retrieve a custom field definition.
   *
   * Returns one definition of the workspace, by its key.
   *
   * `GET /open/v1/custom-field-definitions/{key}` (`getCustomFieldDefinition`).
   */
  get = this.byId("get", "/open/v1/custom-field-definitions/{key}");
  /**
   * Update a custom field definition.
   *
   * Changes the fields sent. `type` cannot change once set: values stored under the old type
   * would no longer read as the new one, and their filters and index would mix both
   * (`400 parameter_invalid`, `param: type`; sending the same type again is allowed). A new
   * `options` list or `required` applies to writes from then on; stored values are not checked
   * again. `searchable: true` builds the key's index, `false` drops it when no other workspace
   * marks the key searchable.
   *
   * **Checked beyond the schema:** `type`, when sent, must be the definition's own (`400
   * parameter_invalid`, `param: type`); `options` only with type `select` (`400
   * parameter_invalid`, `param: options`); marking a 33rd distinct key of the deployment
   * searchable is `409 custom_field_limit_reached`.
   *
   * `PATCH /open/v1/custom-field-definitions/{key}` (`updateCustomFieldDefinition`).
   */
  update = this.updater("/open/v1/custom-field-definitions/{key}");
  /**
   * Delete a custom field definition.
   *
   * Removes the definition. Stored values are not touched: contacts keep the key and its
   * value, which from then on is an undefined key (kept or refused on writes by the workspace's
   * `undefined_custom_fields`). Its index is dropped when no other workspace marks the key
   * searchable. Deleting it again is `404 resource_missing`.
   *
   * `DELETE /open/v1/custom-field-definitions/{key}` (`deleteCustomFieldDefinition`).
   */
  delete = this.byId("delete", "/open/v1/custom-field-definitions/{key}");
}
