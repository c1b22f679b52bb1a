// `deskline events …`: the workspace's event log (what webhooks deliver), for audits and replays.

import type { DesklineEvent as Event, EventTypeDescription } from "@deskline/sdk";
import type { Command } from "commander";
import { clientFor, globalsOf } from "../context.js";
import { type Column, printList, writeLine } from "../output.js";
import { deliveryColumns, guided } from "../webhooks/deliveries.js";
import { examples, getCommand, listingCommand, nestedListingCommand } from "./kit.js";

const COLUMNS: Column<Event>[] = [
  { header: "ID", value: (e) => e.id },
  { header: "TYPE", value: (e) => e.type },
  { header: "OBJECT", value: (e) => e.data.id },
  { header: "CREATED", value: (e) => new Date(e.created * 1000).toISOString() },
];

const TYPE_COLUMNS: Column<EventTypeDescription>[] = [
  { header: "TYPE", value: (t) => t.type },
  { header: "KIND", value: (t) => (t.operational ? "operational" : "resource") },
  { header: "DESCRIPTION", value: (t) => t.description },
];

export function register(events: Command): void {
  examples(
    events,
    "deskline events list --type ticket.updated --limit 20",
    "deskline events resend evt_2bXkqB4cD6eF8gHi --endpoint we_0VbeYBCu9tPuFypVLWBsJN",
  );
  listingCommand(
    events,
    {
      name: "list",
      description: "list events, newest first",
      operation: "listEvents",
      columns: COLUMNS,
      examples: [
        "deskline events list --type contact.created --type contact.updated --created-after 2026-01-01T00:00:00Z --json",
      ],
    },
    (d, query) => d.events.list(query),
  );
  typesCommand(events);
  getCommand(
    events,
    { noun: "event", id: "evt", example: "deskline events get evt_2bXkqB4cD6eF8gHi --json" },
    (d, id) => d.events.get(id),
  );
  resendCommand(events);
  nestedListingCommand(
    events,
    {
      name: "deliveries",
      description: "list an event's deliveries, one per endpoint it was sent to (or resent), newest first",
      argument: "event id (evt_…)",
      operation: "listEventDeliveries",
      columns: deliveryColumns("event"),
      examples: [
        "deskline events deliveries evt_2bXkqB4cD6eF8gHi",
        "deskline events deliveries evt_2bXkqB4cD6eF8gHi --json | jq -r 'select(.status != \"succeeded\") | .endpoint_id'",
      ],
    },
    (d, id, query) => d.events.deliveries(id, query),
    (listing, id) => guided(listing, { eventId: id }),
  );
}

/** `deskline events resend <id>`: the deliveries it queued, or why there is none. */
function resendCommand(events: Command): void {
  examples(
    events
      .command("resend")
      .description(
        "deliver an event again, with the same id and body: to one endpoint, or to every enabled endpoint subscribed to its type",
      )
      .argument("<id>", "event id (evt_…)")
      .option("--endpoint <id>", "only to this endpoint (we_…); it must be enabled")
      .action(runResend),
    "deskline events resend evt_2bXkqB4cD6eF8gHi",
    "deskline events resend evt_2bXkqB4cD6eF8gHi --endpoint we_0VbeYBCu9tPuFypVLWBsJN --json",
  );
}

async function runResend(id: string, options: { endpoint?: string }, command: Command): Promise<void> {
  const deskline = await clientFor(command);
  const body = options.endpoint ? { endpoint_id: options.endpoint } : {};
  const queued = await guided(deskline.events.resend(id, body), {
    eventId: id,
    endpointId: options.endpoint,
  });
  const json = Boolean(globalsOf(command).json);
  if (!json) {
    writeLine(
      queued.data.length
        ? `queued ${queued.data.length} ${queued.data.length === 1 ? "delivery" : "deliveries"} of ${id}:`
        : `queued no delivery of ${id}: no enabled endpoint subscribes to its type, or each has one pending`,
    );
    if (queued.data.length === 0) return;
  }
  await printList(queued.data, deliveryColumns("event"), { json });
}

/** `deskline events types`: the event-type catalog, a table or JSON Lines (with each schema). */
function typesCommand(events: Command): void {
  examples(
    events
      .command("types")
      .description(
        "list every event type an endpoint can subscribe to, with what it means; --json adds the JSON Schema of its body",
      )
      .action(runTypes),
    "deskline events types",
    "deskline events types --json | jq 'select(.type == \"ticket.updated\") | .schema'",
  );
}

async function runTypes(_options: unknown, command: Command): Promise<void> {
  const deskline = await clientFor(command);
  const catalog = await deskline.events.types();
  await printList(catalog.data, TYPE_COLUMNS, { json: Boolean(globalsOf(command).json) });
}
