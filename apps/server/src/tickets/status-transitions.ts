import { schemaDefaults, schemaEnums, schemaTransitions } from "@deskline/spec/values";
import { DomainError } from "../platform/errors.js";

/** The ticket statuses, in the order the spec's `TicketStatus` lists them. */
export const TICKET_STATUSES = schemaEnums.TicketStatus;
export type TicketStatus = (typeof TICKET_STATUSES)[number];

/** A new ticket's status when its create body names none: the spec's `TicketCreate.status` default. */
export const INITIAL_STATUS: TicketStatus = schemaDefaults.TicketCreate.status;

/**
 * Where each status may go, itself aside: the spec's `x-transitions` of `TicketStatus`, generated
 * (also into the table of docs/api.md). Open statuses move freely, to each other and to any
 * terminal one; `Solved` can still be closed; `Closed` and `Cancelled` are final.
 */
const MOVES: Record<TicketStatus, readonly TicketStatus[]> = schemaTransitions.TicketStatus;

/** The part of a ticket the status machine owns. Stamps are set once and never cleared or moved. */
export interface StatusState {
  status: TicketStatus;
  solved_at: Date | null;
  closed_at: Date | null;
}

/** The statuses `from` may move to, itself excluded. */
export const allowedMoves = (from: TicketStatus): TicketStatus[] => [...MOVES[from]];

/** Entering a status stamps the instant, unless that stamp is already set. */
function stamp(state: StatusState, now: Date): StatusState {
  const next = { ...state };
  if (state.status === "Solved") next.solved_at ??= now;
  if (state.status === "Closed" || state.status === "Cancelled") next.closed_at ??= now;
  return next;
}

/** A new ticket: `New` unless given; creating straight into a terminal status stamps too. */
export function initialState(status: TicketStatus | null | undefined, now: Date): StatusState {
  return stamp({ status: status ?? INITIAL_STATUS, solved_at: null, closed_at: null }, now);
}

/**
 * Moves a ticket to `to`. The same status is a no-op and returns `current` itself, so callers can
 * tell "nothing changed" by identity. A forbidden move throws 409 `ticket_status_terminal`.
 */
export function moveTo(current: StatusState, to: TicketStatus, now: Date): StatusState {
  if (to === current.status) return current;
  if (!MOVES[current.status].includes(to)) throw forbidden(current.status, to);
  return stamp({ ...current, status: to }, now);
}

function forbidden(from: TicketStatus, to: TicketStatus): DomainError {
  const allowed = allowedMoves(from);
  const options =
    allowed.length === 0
      ? `a ${from} ticket cannot change status`
      : `a ${from} ticket can only move to ${allowed.map((s) => `'${s}'`).join(", ")}`;
  return new DomainError(
    "conflict",
    "ticket_status_terminal",
    `Cannot move the ticket from '${from}' to '${to}': ${options}.`,
    { param: "status" },
  );
}
