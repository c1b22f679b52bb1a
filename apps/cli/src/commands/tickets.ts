// `deskline tickets …`: bulk status moves by id or by filter (the ops team's `tickets solve`),
// and one command per API operation.

import type { Ticket, TicketCreate, TicketSearch, TicketStatus, TicketUpdate } from "@deskline/sdk";
import type { Command } from "commander";
import { clientFor, globalsOf } from "../context.js";
import { PartialFailure, UsageError } from "../errors.js";
import { ticketColumns } from "../export/columns.js";
import { catalogOf } from "../fields.js";
import { listParameters, ticketCreateSchema, ticketStatusSchema } from "../generated/schemas.js";
import { type Column, formatRecord, formatTable, writeLine } from "../output.js";
import type { MoveReport, MoveTarget } from "../tickets/move-status.js";
import * as kit from "./kit.js";
import { searchCommand } from "./search.js";

const COLUMNS: Column<Ticket>[] = [
  { header: "ID", value: (t) => t.id },
  { header: "STATUS", value: (t) => t.status },
  { header: "PRIORITY", value: (t) => t.priority },
  { header: "SUBJECT", value: (t) => t.subject },
  { header: "TAGS", value: (t) => t.tags },
  { header: "CREATED", value: (t) => t.created_at },
];

const STATUSES = ticketStatusSchema.enum as readonly TicketStatus[];
const FILTERS = listParameters.listTickets;

/** The bulk moves, by the verb ops people use. (`Solved`, `Closed`, `Cancelled` never reopen.) */
const MOVES: { verb: string; status: TicketStatus; summary: string }[] = [
  { verb: "solve", status: "Solved", summary: "mark tickets Solved (stamps solved_at)" },
  { verb: "close", status: "Closed", summary: "close tickets (open or Solved ones; stamps closed_at)" },
  { verb: "cancel", status: "Cancelled", summary: "cancel open tickets (stamps closed_at)" },
];

/** What `create` and `update` write, and their help. */
const TARGET: kit.BodyTarget = { noun: "ticket", catalog: () => catalogOf(ticketCreateSchema) };
const HELP = {
  create: [
    'deskline tickets create --set subject="Printer on fire" --set priority=urgent --set contact_id=con_…',
  ],
  update: {
    description: "change the fields given",
    examples: [
      "deskline tickets update tkt_0VbeYBCu9tPuFypVLWBsJN --set priority=high --set 'tags=billing;refund'",
    ],
  },
};

export function register(tickets: Command): void {
  kit.examples(
    tickets,
    'deskline tickets solve --status "On you" --tag billing',
    "deskline tickets list --status New",
  );
  for (const move of MOVES) verbCommand(tickets, move);
  setStatusCommand(tickets);
  kit.listingCommand(
    tickets,
    {
      name: "list",
      description: "list tickets, newest first",
      operation: "listTickets",
      columns: COLUMNS,
      examples: ['deskline tickets list --status "On you" --priority urgent'],
    },
    (d, query) => d.tickets.list(query),
  );
  searchCommand(tickets, {
    noun: "tickets",
    columns: COLUMNS,
    fields: { flags: new Set() },
    search: (d, body) => d.tickets.search(body as TicketSearch),
    examples: [
      "deskline tickets search --where priority=urgent --where 'status nin Solved,Closed,Cancelled' --or-where tags=escalated",
      "deskline tickets search --where 'due_at exists' --sort updated_at:asc --json",
    ],
  });
  kit.exportCommand(tickets, {
    noun: "tickets",
    operation: "listTickets",
    catalog: ticketColumns,
    columns: "one column per ticket field (tags joined with ;)",
    list: (d, query) => d.tickets.list(query),
    examples: [
      "deskline tickets export --status Solved --created-after 30d --output solved.csv",
      "deskline tickets export --format jsonl --fields id,subject,status,tags",
    ],
  });
  kit.getCommand(
    tickets,
    { noun: "ticket", id: "tkt", example: "deskline tickets get tkt_0VbeYBCu9tPuFypVLWBsJN" },
    (d, id) => d.tickets.get(id),
  );
  kit.createCommand<TicketCreate>(tickets, TARGET, HELP.create, (d, body) => d.tickets.create(body));
  kit.updateCommand<TicketUpdate>(tickets, TARGET, HELP.update, (d, id, body) => d.tickets.update(id, body));
  kit.deleteCommand(
    tickets,
    { noun: "ticket", id: "tkt", example: "deskline tickets delete tkt_0VbeYBCu9tPuFypVLWBsJN" },
    (d, id) => d.tickets.delete(id),
  );
}

/** `deskline tickets solve|close|cancel`: one bulk move by the verb ops people use. */
function verbCommand(tickets: Command, move: (typeof MOVES)[number]): void {
  kit.examples(
    moveCommand(tickets.command(move.verb), move.summary).action(
      async (ids: string[], options, command: Command) => runMove(command, ids, options, move.status),
    ),
    `deskline tickets ${move.verb} tkt_0VbeYBCu9tPuFypVLWBsJN tkt_0VbeYBCu9tPuFypVLWBsJO`,
    `deskline tickets ${move.verb} --status "On you" --tag billing --json`,
  );
}

/** `deskline tickets set-status <status>`: a bulk move to any status the status machine allows. */
function setStatusCommand(tickets: Command): void {
  kit.examples(
    moveCommand(
      tickets.command("set-status").argument("<status>", `one of: ${STATUSES.join(", ")}`),
      "move tickets to any status the status machine allows",
    ).action(runSetStatus),
    'deskline tickets set-status "On hold" --status New --priority low',
  );
}

/** Ids, or the list filters (`--status "On you" --tag billing`) to move every match. */
function moveCommand(command: Command, summary: string): Command {
  return kit
    .addListOptions(command.description(`${summary}: by id, or every ticket matching the filters`), FILTERS)
    .argument("[ids...]", "ticket ids (tkt_…); or give filters instead")
    .option("--concurrency <n>", "tickets moved at once", kit.positiveInteger, 4);
}

async function runSetStatus(
  status: string,
  ids: string[],
  options: Record<string, unknown>,
  command: Command,
): Promise<void> {
  if (!STATUSES.includes(status as TicketStatus)) {
    throw new UsageError(`unknown status '${status}'; one of: ${STATUSES.join(", ")}`);
  }
  await runMove(command, ids, options, status as TicketStatus);
}

async function runMove(
  command: Command,
  ids: string[],
  options: Record<string, unknown>,
  status: TicketStatus,
): Promise<void> {
  const filters = kit.queryOf(options, "listTickets");
  const hasFilters = Object.keys(filters).length > 0;
  if (ids.length > 0 && hasFilters) throw new UsageError("give ticket ids or filters, not both");
  if (ids.length === 0 && !hasFilters) {
    throw new UsageError(`which tickets? Give ids, or filters such as --status "On you" --tag billing`);
  }
  const deskline = await clientFor(command);
  const { moveTickets } = await import("../tickets/move-status.js");
  const limit = options.limit as number | undefined;
  async function* byFilter(): AsyncGenerator<MoveTarget> {
    let count = 0;
    if (limit === 0) return;
    for await (const ticket of deskline.tickets.list({ ...filters, limit: kit.pageSize(limit) })) {
      yield { id: ticket.id, ticket };
      if (limit !== undefined && ++count >= limit) return;
    }
  }
  async function* byId(): AsyncGenerator<MoveTarget> {
    for (const id of ids) yield { id };
  }
  const report = await moveTickets(
    deskline,
    ids.length ? byId() : byFilter(),
    status,
    options.concurrency as number,
  );
  printReport(report, Boolean(globalsOf(command).json));
  if (report.refused + report.failed > 0) throw new PartialFailure("some tickets were not moved");
}

function printReport(report: MoveReport, json: boolean): void {
  if (json) {
    writeLine(JSON.stringify(report));
    return;
  }
  if (report.results.length > 0) {
    writeLine(
      formatTable(report.results, [
        { header: "ID", value: (r) => r.id },
        { header: "WAS", value: (r) => r.from },
        { header: "RESULT", value: (r) => r.outcome },
        { header: "REASON", value: (r) => r.reason },
      ]),
    );
    writeLine("");
  }
  writeLine(
    formatRecord({
      status: report.status,
      changed: report.changed,
      unchanged: report.unchanged,
      refused: report.refused,
      failed: report.failed,
    }),
  );
}
