import { parameterDefaults } from "@deskline/spec/values";
import type { ValidateFunction } from "ajv";
import { AppError, DomainError, errorObject } from "../platform/errors.js";
import { httpError } from "../platform/http/error-response.js";
import type { Handler } from "../platform/http/operation.js";
import { parsePage, parsePull, toPage } from "../platform/http/paging.js";
import { mountHandlers, type RouteKit, workspaceOf } from "../platform/http/route-kit.js";
import { assertValid } from "../platform/http/validate.js";
import { toPulledPage } from "../records/pull.js";
import { allOf, filterOfGroups } from "../records/search/filter-groups.js";
import { searchWindow, toSearchResult } from "../records/search/sorted-page.js";
import type { PullSettings } from "../records/settings.js";
import type { Schema } from "../spec/types.js";
import {
  phoneSettingsOf,
  type SettingsOnce,
  settingsOnce,
  type Workspaces,
} from "../workspaces/workspaces.js";
import { type BatchItemResult, parseMatchKey, upsertBatch } from "./batch-upsert.js";
import { type ContactInput, toContact } from "./contacts.js";
import { type CustomFieldStores, customFieldCheck } from "./custom-field-check.js";
import { customFieldFilter, FILTER_PREFIX } from "./custom-field-values.js";
import { type ErasureDeps, eraseContact as erase } from "./erase.js";
import { type MergeDeps, mergeContacts as merge } from "./merge.js";
import { type PhoneRules, phoneRules } from "./phone.js";
import { contactSearchFields } from "./search-fields.js";
import { searchFilter } from "./search-keys.js";

type Kit = RouteKit<
  MergeDeps & ErasureDeps & CustomFieldStores & { workspaces: Pick<Workspaces, "contactSettings"> },
  PullSettings
>;

/**
 * How this request reads phone numbers: its workspace's settings and its `phone_country`. A
 * write that sends no `phone` never consults them (`reads: false`), so it does not pay their
 * read; its `phone_country` is still checked.
 */
async function rulesOf(
  settings: SettingsOnce,
  query: { phone_country?: string },
  reads = true,
): Promise<PhoneRules> {
  return phoneRules(reads ? await settings() : phoneSettingsOf(null), query.phone_country);
}

/** Whether a create or PATCH body has a phone number to read. */
const sendsPhone = (body: { phone?: unknown }) => typeof body.phone === "string";

/** A body's `custom_fields`, as the check reads them. */
const customFieldsOf = (body: { custom_fields?: unknown }) =>
  body.custom_fields as Record<string, unknown> | null | undefined;

/**
 * The list's `custom_fields.<key>` filters as a database filter, read by the workspace's
 * definitions; no read when the query has none.
 */
async function customFilters(store: Kit["store"], workspaceId: string, query: object) {
  if (!Object.keys(query).some((name) => name.startsWith(FILTER_PREFIX))) return undefined;
  const definitions = await store.customFieldDefinitions.byKey(workspaceId);
  return customFieldFilter(definitions, query as Record<string, unknown>);
}

/** The contacts operations: parse → call → shape; the rules live in contacts/contacts.ts. */
export function contactRoutes(kit: Kit): void {
  mountHandlers(kit, {
    listContacts,
    searchContacts,
    createContact,
    batchUpsertContacts,
    mergeContacts,
    getContact,
    updateContact,
    deleteContact,
    eraseContact,
  });
}

function listContacts({ store, config }: Kit): Handler<"listContacts"> {
  return async ({ ctx, query }) => {
    const workspaceId = workspaceOf(ctx);
    // The `phone` filter reads its value as a write reads a phone: in the request's country.
    const phoneCountry =
      query.phone === undefined
        ? query.phone_country
        : (await rulesOf(settingsOnce(store.workspaces, workspaceId), query)).country;
    const filters = {
      ...query,
      phone_country: phoneCountry ?? undefined,
      custom_fields: await customFilters(store, workspaceId, query),
    };
    const pull = parsePull(query);
    if (pull) {
      const pulled = await store.contacts.pull(workspaceId, filters, pull, config.syncSettleMs);
      return { status: 200, body: toPulledPage(pulled, toContact) };
    }
    const page = parsePage(query);
    const docs = await store.contacts.list(workspaceId, filters, page);
    return { status: 200, body: toPage(docs, page.limit, toContact) };
  };
}

function searchContacts({ store }: Kit): Handler<"searchContacts"> {
  return async ({ ctx, body }) => {
    const workspaceId = workspaceOf(ctx);
    const window = searchWindow(body, parameterDefaults.Limit);
    // The workspace's phone settings and custom field definitions, each read only when a filter needs it.
    const [{ country }, definitions] = await Promise.all([
      rulesOf(
        settingsOnce(store.workspaces, workspaceId),
        {},
        filtersOn(body, (field) => field === "phone"),
      ),
      filtersOn(body, (field) => field.startsWith(FILTER_PREFIX))
        ? store.customFieldDefinitions.byKey(workspaceId)
        : new Map(),
    ]);
    const filter = allOf([
      body.query ? searchFilter(body.query, "query") : {},
      filterOfGroups(body.filter_groups, contactSearchFields(country, definitions)),
    ]);
    const docs = await store.contacts.search(workspaceId, filter, window);
    return { status: 200, body: toSearchResult(docs, window, toContact) };
  };
}

/** Whether a search has a filter on a field `is` picks (phones read in the workspace's country). */
const filtersOn = (
  body: { filter_groups?: { filters: { field: string }[] }[] },
  is: (field: string) => boolean,
) => body.filter_groups?.some((group) => group.filters.some((filter) => is(filter.field))) ?? false;

function createContact({ store }: Kit): Handler<"createContact"> {
  return async ({ ctx, query, body }) => {
    const workspaceId = workspaceOf(ctx);
    const settings = settingsOnce(store.workspaces, workspaceId);
    const rules = await rulesOf(settings, query, sendsPhone(body));
    await (await customFieldCheck(store, workspaceId, settings)).check(customFieldsOf(body), "create");
    const doc = await store.contacts.create(workspaceId, body, rules);
    return { status: 201, body: toContact(doc) };
  };
}

function batchUpsertContacts({ store, openapi }: Kit): Handler<"batchUpsertContacts"> {
  // A batch item is a PATCH body: the spec's ContactUpdate, checked item by item so that one
  // invalid item fails alone (the batch schema itself only asks for objects).
  const validateItem = openapi.operations.get("updateContact")?.validateBody as ValidateFunction;
  const parseItem = (item: unknown): ContactInput | AppError => {
    try {
      assertValid(validateItem, item, "body");
      return item as ContactInput;
    } catch (error) {
      if (error instanceof AppError) return error;
      throw error;
    }
  };
  return async ({ ctx, query, body }) => {
    const workspaceId = workspaceOf(ctx);
    const settings = settingsOnce(store.workspaces, workspaceId);
    const rules = await rulesOf(settings, query);
    const customFields = await customFieldCheck(store, workspaceId, settings);
    // Each item's custom fields checked as a PATCH's; whether one that creates its contact has
    // every required key is known only once its match is looked up (`refuseCreate`).
    const checkItem = async (item: ContactInput | AppError) => {
      if (item instanceof AppError) return item;
      try {
        await customFields.check(customFieldsOf(item), "update");
        return item;
      } catch (error) {
        if (error instanceof AppError) return error;
        throw error;
      }
    };
    const items = await Promise.all(body.contacts.map(parseItem).map(checkItem));
    const results = await upsertBatch(
      store.contacts,
      workspaceId,
      parseMatchKey(body.match, rules),
      items,
      rules,
      (item) => customFields.refuseCreate(customFieldsOf(item)),
    );
    return { status: 200, body: { object: "contact_batch", data: results.map(toBatchItemResult) } };
  };
}

function mergeContacts({ store }: Kit): Handler<"mergeContacts"> {
  return async ({ ctx, id, body }) => {
    const workspaceId = workspaceOf(ctx);
    const customFields = await customFieldCheck(
      store,
      workspaceId,
      settingsOnce(store.workspaces, workspaceId),
    );
    // The values the survivor takes from the merged contacts are checked as a PATCH's would be.
    const checkPlan = (plan: ContactInput) => customFields.check(customFieldsOf(plan), "update");
    const doc = await merge(store, workspaceId, id, body, checkPlan);
    return { status: 200, body: toContact(doc) };
  };
}

function getContact({ store }: Kit): Handler<"getContact"> {
  return async ({ ctx, id }) => ({
    status: 200,
    body: toContact(await store.contacts.get(workspaceOf(ctx), id)),
  });
}

function updateContact({ store }: Kit): Handler<"updateContact"> {
  return async ({ ctx, id, query, body }) => {
    const workspaceId = workspaceOf(ctx);
    const settings = settingsOnce(store.workspaces, workspaceId);
    const rules = await rulesOf(settings, query, sendsPhone(body));
    // A PATCH without custom fields changes none, and reads no definition.
    if (body.custom_fields) {
      await (await customFieldCheck(store, workspaceId, settings)).check(customFieldsOf(body), "update");
    }
    const { doc } = await store.contacts.update(workspaceId, id, body, rules);
    return { status: 200, body: toContact(doc) };
  };
}

function deleteContact({ store }: Kit): Handler<"deleteContact"> {
  return async ({ ctx, id }) => {
    await store.contacts.delete(workspaceOf(ctx), id);
    return { status: 200, body: { id, object: "contact", deleted: true } };
  };
}

function eraseContact({ store, logger }: Kit): Handler<"eraseContact"> {
  return async ({ ctx, id }) => ({ status: 200, body: await erase(store, logger, workspaceOf(ctx), id) });
}

/** One item's result as the spec shows it: the contact, or the error it would have got alone. */
function toBatchItemResult(result: BatchItemResult, index: number): Schema<"ContactBatchItemResult"> {
  if (result.status !== "error") return { index, status: result.status, contact: toContact(result.doc) };
  const error = result.error instanceof DomainError ? httpError(result.error) : result.error;
  return { index, status: "error", error: errorObject(error) };
}
