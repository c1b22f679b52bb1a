// `deskline events …`: the workspace's event log (what webhooks deliver), for audits and replays.

import type { DesklineEvent as Event } from "@deskline/sdk";
import type { Command } from "commander";
import { clientFor } from "../context.js";
import { listParameters } from "../generated/schemas.js";
import type { Column } from "../output.js";
import { addListOptions, examples, getCommand, listCommand, pageSize, queryOf } from "./kit.js";

const COLUMNS: Column<Event>[] = [
  { header: "ID", value: (e) => e.id },
  { header: "TYPE", value: (e) => e.type },
  { header: "OBJECT", value: (e) => e.data.id },
  { header: "CREATED", value: (e) => new Date(e.created * 1000).toISOString() },
];

export function register(events: Command): void {
  examples(events, "deskline events list --type ticket.updated --limit 20");
  examples(
    addListOptions(
      events.command("list").description("list events, newest first"),
      listParameters.listEvents,
    ).action(async (options, command: Command) => {
      const deskline = await clientFor(command);
      const query = { ...queryOf(options, listParameters.listEvents), limit: pageSize(options.limit) };
      await listCommand(command, deskline.events.list(query as never), COLUMNS, options.limit);
    }),
    "deskline events list --type contact.created --type contact.updated --created-after 2026-01-01T00:00:00Z --json",
  );
  getCommand(
    events,
    { noun: "event", id: "evt", example: "deskline events get evt_2bXkqB4cD6eF8gHi --json" },
    (d, id) => d.events.get(id),
  );
}
