import type { ValidateFunction } from "ajv";
import { AppError, DomainError, errorObject } from "../platform/errors.js";
import { httpError } from "../platform/http/error-response.js";
import type { Handler } from "../platform/http/operation.js";
import { parsePage, parsePull, toPage } from "../platform/http/paging.js";
import { mountHandlers, type RouteKit, workspaceOf } from "../platform/http/route-kit.js";
import { assertValid } from "../platform/http/validate.js";
import { toPulledPage } from "../records/pull.js";
import type { PullSettings } from "../records/settings.js";
import type { Schema } from "../spec/types.js";
import { type BatchItemResult, parseMatchKey, upsertBatch } from "./batch-upsert.js";
import { type ContactInput, toContact } from "./contacts.js";
import { type ErasureDeps, eraseContact as erase } from "./erase.js";
import { type MergeDeps, mergeContacts as merge } from "./merge.js";

type Kit = RouteKit<MergeDeps & ErasureDeps, PullSettings>;

/** The contacts operations: parse → call → shape; the rules live in contacts/contacts.ts. */
export function contactRoutes(kit: Kit): void {
  mountHandlers(kit, {
    listContacts,
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
    const pull = parsePull(query);
    if (pull) {
      const pulled = await store.contacts.pull(workspaceOf(ctx), query, pull, config.syncSettleMs);
      return { status: 200, body: toPulledPage(pulled, toContact) };
    }
    const page = parsePage(query);
    const docs = await store.contacts.list(workspaceOf(ctx), query, page);
    return { status: 200, body: toPage(docs, page.limit, toContact) };
  };
}

function createContact({ store }: Kit): Handler<"createContact"> {
  return async ({ ctx, body }) => {
    const doc = await store.contacts.create(workspaceOf(ctx), body);
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
  return async ({ ctx, body }) => {
    const items = body.contacts.map(parseItem);
    const results = await upsertBatch(store.contacts, workspaceOf(ctx), parseMatchKey(body.match), items);
    return { status: 200, body: { object: "contact_batch", data: results.map(toBatchItemResult) } };
  };
}

function mergeContacts({ store }: Kit): Handler<"mergeContacts"> {
  return async ({ ctx, id, body }) => {
    const doc = await merge(store, workspaceOf(ctx), id, body);
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
  return async ({ ctx, id, body }) => {
    const { doc } = await store.contacts.update(workspaceOf(ctx), id, body);
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
