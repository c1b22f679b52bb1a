import { parsePage, parsePull, toPage } from "../platform/http/paging.js";
import { type RouteKit, workspaceOf } from "../platform/http/route-kit.js";
import { toPulledPage } from "../records/pull.js";
import type { PullSettings } from "../records/settings.js";
import { type Tickets, toTicket } from "./tickets.js";

/** The tickets operations: parse → call → shape; the rules live in tickets/tickets.ts and tickets/status-transitions.ts. */
export function ticketRoutes({ op, store, config }: RouteKit<{ tickets: Tickets }, PullSettings>): void {
  op("listTickets", async ({ ctx, query }) => {
    const pull = parsePull(query);
    if (pull) {
      const pulled = await store.tickets.pull(workspaceOf(ctx), query, pull, config.syncSettleMs);
      return { status: 200, body: toPulledPage(pulled, toTicket) };
    }
    const page = parsePage(query);
    const docs = await store.tickets.list(workspaceOf(ctx), query, page);
    return { status: 200, body: toPage(docs, page.limit, toTicket) };
  });

  op("createTicket", async ({ ctx, body }) => {
    const doc = await store.tickets.create(workspaceOf(ctx), body);
    return { status: 201, body: toTicket(doc) };
  });

  op("getTicket", async ({ ctx, id }) => ({
    status: 200,
    body: toTicket(await store.tickets.get(workspaceOf(ctx), id)),
  }));

  op("updateTicket", async ({ ctx, id, body }) => {
    const { doc } = await store.tickets.update(workspaceOf(ctx), id, body);
    return { status: 200, body: toTicket(doc) };
  });

  op("deleteTicket", async ({ ctx, id }) => {
    await store.tickets.delete(workspaceOf(ctx), id);
    return { status: 200, body: { id, object: "ticket", deleted: true } };
  });
}
