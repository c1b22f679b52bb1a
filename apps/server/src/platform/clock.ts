/**
 * Where the server reads the time: one clock passed to what decides by it (delivery's leases,
 * due times, retries and sweeps), so a test moves time instead of sleeping and a fleet can decide
 * on the database's time rather than each process's (docs/decisions.md, "One clock").
 */

export interface Clock {
  /** Milliseconds since the epoch, now. */
  now(): number;
}

/** This process's wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** The clock's time as a `Date`, for the stores' documents. */
export const dateOf = (clock: Clock): Date => new Date(clock.now());
