// Moving tickets to a status in bulk (`tickets solve|close|cancel|set-status`): each ticket is
// reported as changed, unchanged (already there), refused (the status machine says no: the API's
// 409 and its reason) or failed (anything else). The API decides what is allowed; the CLI does
// not keep a copy of the status machine.
import { ConflictError, type Deskline, type Ticket, type TicketStatus } from "@deskline/sdk";
import { describeError } from "../errors.js";
import { forEachConcurrent } from "../pool.js";

export type MoveOutcome = "changed" | "unchanged" | "refused" | "failed";

export interface MoveResult {
  id: string;
  outcome: MoveOutcome;
  /** The status before (when it could be read). */
  from?: string;
  code?: string;
  reason?: string;
}

export interface MoveReport {
  status: TicketStatus;
  changed: number;
  unchanged: number;
  refused: number;
  failed: number;
  results: MoveResult[];
}

/** A ticket to move: its id, and the ticket itself when a list already gave it. */
export type MoveTarget = { id: string; ticket?: Ticket };

export async function moveTickets(
  deskline: Deskline,
  targets: AsyncIterable<MoveTarget>,
  status: TicketStatus,
  concurrency: number,
): Promise<MoveReport> {
  const report: MoveReport = { status, changed: 0, unchanged: 0, refused: 0, failed: 0, results: [] };
  await forEachConcurrent(targets, concurrency, async (target) => {
    const result = await moveOne(deskline, target, status);
    report[result.outcome]++;
    report.results.push(result);
  });
  return report;
}

async function moveOne(deskline: Deskline, target: MoveTarget, status: TicketStatus): Promise<MoveResult> {
  let from: string | undefined = target.ticket?.status;
  try {
    from ??= (await deskline.tickets.get(target.id)).status;
    if (from === status) return { id: target.id, outcome: "unchanged", from };
    await deskline.tickets.update(target.id, { status });
    return { id: target.id, outcome: "changed", from };
  } catch (error) {
    const { code, reason } = describeError(error);
    const refused = error instanceof ConflictError && code === "ticket_status_terminal";
    return { id: target.id, outcome: refused ? "refused" : "failed", from, code, reason };
  }
}
