/**
 * A lease as its holder sees it, on this process's monotonic clock (which no pause, wall-clock
 * step or drift moves): it holds from just before it was asked for until `leaseMs` later. A lane
 * starts a send or a claim only while the lease has room for it — `needMs`, the attempt's timeout
 * plus a margin — so a worker that was paused, or whose database calls ran long, past its lease
 * sends nothing more (docs/webhooks.md, "What delivery guarantees, and under which faults").
 */
export class HeldLease {
  constructor(
    private since: number,
    private readonly leaseMs: number,
    private readonly needMs: number,
  ) {}

  /** Renewed: asked for at `at` (performance.now(), taken before the write). */
  renewed(at: number): void {
    this.since = at;
  }

  /** Whether a send (or a claim) started now ends within the lease. */
  hasRoom(): boolean {
    return performance.now() + this.needMs < this.since + this.leaseMs;
  }
}
