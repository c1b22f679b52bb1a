import { toContact } from "../db/contacts.js";
import { isId } from "../domain/ids.js";
import { parsePage, parsePull, toPage, toPulledPage } from "../http/paging.js";
import { type RouteKit, workspaceOf } from "./kit.js";

/** Seed §4.1: parse → call → shape; the rules live in db/contacts.ts. */
export function contactRoutes({ op, store, config }: RouteKit): void {
  op("listContacts", async ({ ctx, query }) => {
    const pull = parsePull(query);
    if (pull) {
      const pulled = await store.contacts.pull(workspaceOf(ctx), query, pull, config.syncSettleMs);
      return { status: 200, body: toPulledPage(pulled, toContact) };
    }
    const page = parsePage(query, (value) => isId("con", value));
    const docs = await store.contacts.list(workspaceOf(ctx), query, page);
    return { status: 200, body: toPage(docs, page.limit, toContact) };
  });

  op("createContact", async ({ ctx, body }) => {
    const doc = await store.contacts.create(workspaceOf(ctx), body);
    return { status: 201, body: toContact(doc) };
  });

  op("getContact", async ({ ctx, id }) => ({
    status: 200,
    body: toContact(await store.contacts.get(workspaceOf(ctx), id)),
  }));

  op("updateContact", async ({ ctx, id, body }) => {
    const { doc } = await store.contacts.update(workspaceOf(ctx), id, body);
    return { status: 200, body: toContact(doc) };
  });

  op("deleteContact", async ({ ctx, id }) => {
    await store.contacts.delete(workspaceOf(ctx), id);
    return { status: 200, body: { id, object: "contact", deleted: true } };
  });
}
