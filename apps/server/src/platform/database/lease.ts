/**
 * Leases kept in documents (docs/decisions.md, "Leases"): who may work on a thing, fleet-wide,
 * without a lock server or transactions. A lease is two fields of the document it guards — who
 * holds it and until when — written by conditional updates, so a holder that dies lets go when
 * its time runs out. Three things are leased this way: an endpoint's lane
 * (webhooks/endpoints/lanes.ts), a claimed delivery (webhooks/deliveries/store.ts) and the
 * migration lock (platform/database/migrations.ts). Their times are the database's
 * (database-clock.ts), so a process whose clock is off neither takes a lease early nor keeps one
 * late; the holder's own view of its lease is on its monotonic clock (`HeldLease`).
 *
 * `LeaseFields` says, for one pair of field names, what "free", "held by", "take", "extend" and
 * "let go" are as query and update fragments, for the stores to put in their own updates (one
 * round trip with the rest of what they write).
 */
export class LeaseFields<Holder extends string, Until extends string> {
  constructor(
    readonly holderField: Holder,
    readonly untilField: Until,
  ) {}

  /**
   * A filter: nobody may hold it at `now` — never held (no `until` yet), let go, or its lease ran
   * out. A lease let go with a later `until` (a rest, a `Retry-After`) is not free before it.
   */
  free(now: Date): Record<Until, { $not: { $gt: Date } }> {
    return this.fields({ [this.untilField]: { $not: { $gt: now } } });
  }

  /** A filter: `holder` holds it (whether or not its time ran out: the fence of a write). */
  heldBy(holder: string): Record<Holder, string> {
    return this.fields({ [this.holderField]: holder });
  }

  /** A `$set`: `holder` holds it for `leaseMs` from `now`. */
  take(holder: string, now: Date, leaseMs: number): Record<Holder, string> & Record<Until, Date> {
    return this.fields({ [this.holderField]: holder, [this.untilField]: new Date(now.getTime() + leaseMs) });
  }

  /** A `$max`: held `leaseMs` from `now`, or longer where it already is. */
  extend(now: Date, leaseMs: number): Record<Until, Date> {
    return this.until(new Date(now.getTime() + leaseMs));
  }

  /** A `$max` (or `$set`): not free before `until`. */
  until(until: Date): Record<Until, Date> {
    return this.fields({ [this.untilField]: until });
  }

  /** A `$set`: held by nobody, free from `until` (null: at once). */
  released(until: Date | null = null): Record<Holder, null> & Record<Until, Date | null> {
    return this.fields({ [this.holderField]: null, [this.untilField]: until });
  }

  // Computed keys widen to `string`; the two names are this instance's own.
  private fields<T>(fragment: object): T {
    return fragment as T;
  }
}

/**
 * A lease as its holder sees it, on this process's monotonic clock (which no pause, wall-clock
 * step or drift moves): it holds from just before it was asked for until `leaseMs` later. Work
 * starts only while the lease has room for it — `needMs`: for a lane, the attempt's timeout plus
 * a margin — so a process that was paused, or whose database calls ran long, past its lease does
 * nothing more under it (docs/webhooks.md, "What delivery guarantees, and under which faults").
 */
export class HeldLease {
  constructor(
    private since: number,
    private readonly leaseMs: number,
    private readonly needMs = 0,
  ) {}

  /** Renewed: asked for at `at` (performance.now(), taken before the write). */
  renewed(at: number): void {
    this.since = at;
  }

  /** Whether work started now (taking `needMs`) ends within the lease. */
  hasRoom(): boolean {
    return performance.now() + this.needMs < this.since + this.leaseMs;
  }
}
