import { describe, expect, it } from "vitest";
import { DomainError } from "../src/platform/errors.js";
import { httpError } from "../src/platform/http/error-response.js";
import {
  allowedMoves,
  initialState,
  moveTo,
  type StatusState,
  TICKET_STATUSES,
  type TicketStatus,
} from "../src/tickets/status-transitions.js";

// The rules written out by hand (docs/design.md, Ticket status), not derived from the module under test:
// "ok" moves, "same" is the no-op, "409" is refused.
const X = "409";
const TABLE: Record<TicketStatus, Record<TicketStatus, "ok" | "same" | typeof X>> = {
  New: {
    New: "same",
    "On you": "ok",
    "On customer": "ok",
    "On hold": "ok",
    Solved: "ok",
    Closed: "ok",
    Cancelled: "ok",
  },
  "On you": {
    New: "ok",
    "On you": "same",
    "On customer": "ok",
    "On hold": "ok",
    Solved: "ok",
    Closed: "ok",
    Cancelled: "ok",
  },
  "On customer": {
    New: "ok",
    "On you": "ok",
    "On customer": "same",
    "On hold": "ok",
    Solved: "ok",
    Closed: "ok",
    Cancelled: "ok",
  },
  "On hold": {
    New: "ok",
    "On you": "ok",
    "On customer": "ok",
    "On hold": "same",
    Solved: "ok",
    Closed: "ok",
    Cancelled: "ok",
  },
  Solved: { New: X, "On you": X, "On customer": X, "On hold": X, Solved: "same", Closed: "ok", Cancelled: X },
  Closed: { New: X, "On you": X, "On customer": X, "On hold": X, Solved: X, Closed: "same", Cancelled: X },
  Cancelled: { New: X, "On you": X, "On customer": X, "On hold": X, Solved: X, Closed: X, Cancelled: "same" },
};

const created = new Date("2026-01-01T00:00:00Z");
const later = new Date("2026-01-02T00:00:00Z");

/** Which stamps a ticket sitting in `status` carries after being created there. */
const stampsIn = (status: TicketStatus) => ({
  solved_at: status === "Solved" ? created : null,
  closed_at: status === "Closed" || status === "Cancelled" ? created : null,
});

describe("initialState", () => {
  it("defaults to New with no stamps", () => {
    expect(initialState(undefined, created)).toEqual({ status: "New", solved_at: null, closed_at: null });
    expect(initialState(null, created)).toEqual({ status: "New", solved_at: null, closed_at: null });
  });

  it.each(TICKET_STATUSES)("creating in %s stamps what entering it stamps", (status) => {
    expect(initialState(status, created)).toEqual({ status, ...stampsIn(status) });
  });
});

describe("moveTo: the whole 7×7 table", () => {
  const cases = TICKET_STATUSES.flatMap((from) =>
    TICKET_STATUSES.map((to) => [from, to, TABLE[from][to]] as const),
  );

  it.each(cases)("%s → %s: %s", (from, to, outcome) => {
    const current: StatusState = initialState(from, created);
    if (outcome === X) {
      const error = (() => {
        try {
          moveTo(current, to, later);
        } catch (caught) {
          return caught;
        }
      })();
      expect(error).toBeInstanceOf(DomainError);
      expect(error).toMatchObject({ kind: "conflict", code: "ticket_status_terminal", param: "status" });
      // The rule knows no HTTP; the error middleware answers a conflict with 409.
      expect(httpError(error as DomainError).status).toBe(409);
      expect((error as DomainError).message).toContain(`'${from}'`);
      expect((error as DomainError).message).toContain(`'${to}'`);
      return;
    }
    const next = moveTo(current, to, later);
    if (outcome === "same") {
      expect(next).toBe(current);
      return;
    }
    // Stamps already set stay; entering Solved or Closed/Cancelled stamps the move's instant.
    const before = stampsIn(from);
    expect(next).toEqual({
      status: to,
      solved_at: before.solved_at ?? (to === "Solved" ? later : null),
      closed_at: before.closed_at ?? (to === "Closed" || to === "Cancelled" ? later : null),
    });
  });

  it("Solved → Closed keeps solved_at where it was and stamps closed_at", () => {
    const solved = moveTo(initialState("On you", created), "Solved", created);
    expect(moveTo(solved, "Closed", later)).toEqual({
      status: "Closed",
      solved_at: created,
      closed_at: later,
    });
  });
});

describe("allowedMoves and the 409 message", () => {
  it("lists where a status may go", () => {
    expect(allowedMoves("New")).toEqual([
      "On you",
      "On customer",
      "On hold",
      "Solved",
      "Closed",
      "Cancelled",
    ]);
    expect(allowedMoves("Solved")).toEqual(["Closed"]);
    expect(allowedMoves("Closed")).toEqual([]);
    expect(allowedMoves("Cancelled")).toEqual([]);
  });

  it("names what is allowed", () => {
    expect(() => moveTo(initialState("Solved", created), "New", later)).toThrow(
      "Cannot move the ticket from 'Solved' to 'New': a Solved ticket can only move to 'Closed'.",
    );
    expect(() => moveTo(initialState("Cancelled", created), "Closed", later)).toThrow(
      "Cannot move the ticket from 'Cancelled' to 'Closed': a Cancelled ticket cannot change status.",
    );
  });
});
