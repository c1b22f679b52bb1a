/**
 * When an endpoint's lane may send next: its rate limit (`rate_limit`, deliveries per second) and
 * any hold a receiver asked for (`Retry-After`), starting from where the lane's last run left it
 * (the lease's `lane_until`, webhooks/endpoints/lanes.ts), so a limit holds across workers.
 * Sends are booked one after another at the rate, as a GCRA does: no burst beyond one at a time.
 * Pure: the clock is a parameter.
 */
export class Pace {
  private intervalMs: number;
  private nextMs: number;

  constructor(ratePerSecond: number | null, notBeforeMs: number) {
    this.intervalMs = ratePerSecond ? 1000 / ratePerSecond : 0;
    this.nextMs = notBeforeMs;
  }

  /** The endpoint's limit changed (an edit read with the lease). */
  setRate(ratePerSecond: number | null): void {
    this.intervalMs = ratePerSecond ? 1000 / ratePerSecond : 0;
  }

  /** Whether sends are limited at all. */
  get limited(): boolean {
    return this.intervalMs > 0;
  }

  /** When the next send may start (epoch ms). */
  get nextAt(): number {
    return this.nextMs;
  }

  /** Books the next send: when it may start (never before `nowMs`). */
  book(nowMs: number): number {
    const at = Math.max(nowMs, this.nextMs);
    this.nextMs = at + this.intervalMs;
    return at;
  }

  /**
   * A send started at `atMs`, maybe later than booked (a busy process's timers run late): the
   * next starts a whole interval after it, so no two sends are ever closer than the limit allows.
   */
  started(atMs: number): void {
    this.nextMs = Math.max(this.nextMs, atMs + this.intervalMs);
  }

  /** No send before `untilMs` (a receiver's Retry-After). */
  hold(untilMs: number): void {
    this.nextMs = Math.max(this.nextMs, untilMs);
  }

  /**
   * How many sends fit in the next `windowMs`: a limited lane claims no more than it can send
   * soon, so its claims never wait out their lease.
   */
  fits(windowMs: number, most: number): number {
    if (!this.limited) return most;
    return Math.max(1, Math.min(most, Math.floor(windowMs / this.intervalMs)));
  }
}
