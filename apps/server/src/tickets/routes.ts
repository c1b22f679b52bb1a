import { parameterDefaults } from "@deskline/spec/values";
import type { Handler } from "../platform/http/operation.js";
import { parsePage, parsePull, toPage } from "../platform/http/paging.js";
import { mountHandlers, type RouteKit, workspaceOf } from "../platform/http/route-kit.js";
import { toPulledPage } from "../records/pull.js";
import { filterOfGroups } from "../records/search/filter-groups.js";
import { searchWindow, toSearchResult } from "../records/search/sorted-page.js";
import type { PullSettings } from "../records/settings.js";
import { ticketSearchFields } from "./search-fields.js";
import { type Tickets, toTicket } from "./tickets.js";

type Kit = RouteKit<{ tickets: Tickets }, PullSettings>;

/** The tickets operations: parse → call → shape; the rules live in tickets/tickets.ts and tickets/status-transitions.ts. */
export function ticketRoutes(kit: Kit): void {
  mountHandlers(kit, { listTickets, searchTickets, createTicket, getTicket, updateTicket, deleteTicket });
}

function listTickets({ store, config }: Kit): Handler<"listTickets"> {
  return async ({ ctx, query }) => {
    const pull = parsePull(query);
    if (pull) {
      const pulled = await store.tickets.pull(workspaceOf(ctx), query, pull, config.syncSettleMs);
      return { status: 200, body: toPulledPage(pulled, toTicket) };
    }
    const page = parsePage(query);
    const docs = await store.tickets.list(workspaceOf(ctx), query, page);
    return { status: 200, body: toPage(docs, page.limit, toTicket) };
  };
}

function searchTickets({ store }: Kit): Handler<"searchTickets"> {
  return async ({ ctx, body }) => {
    const window = searchWindow(body, parameterDefaults.Limit);
    const filter = filterOfGroups(body.filter_groups, ticketSearchFields);
    const docs = await store.tickets.search(workspaceOf(ctx), filter, window);
    return { status: 200, body: toSearchResult(docs, window, toTicket) };
  };
}

function createTicket({ store }: Kit): Handler<"createTicket"> {
  return async ({ ctx, body }) => {
    const doc = await store.tickets.create(workspaceOf(ctx), body);
    return { status: 201, body: toTicket(doc) };
  };
}

function getTicket({ store }: Kit): Handler<"getTicket"> {
  return async ({ ctx, id }) => ({
    status: 200,
    body: toTicket(await store.tickets.get(workspaceOf(ctx), id)),
  });
}

function updateTicket({ store }: Kit): Handler<"updateTicket"> {
  return async ({ ctx, id, body }) => {
    const { doc } = await store.tickets.update(workspaceOf(ctx), id, body);
    return { status: 200, body: toTicket(doc) };
  };
}

function deleteTicket({ store }: Kit): Handler<"deleteTicket"> {
  return async ({ ctx, id }) => {
    await store.tickets.delete(workspaceOf(ctx), id);
    return { status: 200, body: { id, object: "ticket", deleted: true } };
  };
}
