import type { Db } from "mongodb";
import type { Clock } from "../clock.js";

/**
 * The database's time, read on this process's monotonic clock (docs/decisions.md, "One clock"):
 * what a fleet decides leases and due times by, so a process whose wall clock is a minute off
 * (a host that drifted) changes neither who holds a lane nor when a delivery is due. It asks the
 * database for its time (`hello`'s `localTime`; `isMaster` on servers without `hello`), takes the
 * answer as the time halfway through the round trip, and counts on from there with
 * `performance.now()`, which no change of the wall clock moves. It asks again every `refreshMs`,
 * keeping the answer whose round trip was shortest (the least uncertain) unless it is stale.
 */

interface Sample {
  /** The database's time (epoch ms) at `at`. */
  databaseMs: number;
  /** When, on the monotonic clock. */
  at: number;
  /** How long the round trip took: the sample's uncertainty. */
  roundTripMs: number;
}

/** How often a process asks the database for its time again. */
const REFRESH_MS = 30_000;
/** Samples taken at start: the one with the shortest round trip is kept. */
const FIRST_SAMPLES = 3;
/** A fresh sample whose round trip is at most this much worse than the kept one's replaces it. */
const ROUND_TRIP_SLACK_MS = 20;

export class DatabaseClock implements Clock {
  private sample: Sample | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    /** Until the first answer: this process's wall clock. */
    private readonly before: Clock = { now: () => Date.now() },
  ) {}

  now(): number {
    const { sample } = this;
    if (!sample) return this.before.now();
    return Math.round(sample.databaseMs + (performance.now() - sample.at));
  }

  /** How far this process's wall clock is from the database's (ms; positive: ahead). */
  offsetMs(): number {
    return Date.now() - this.now();
  }

  /** Reads the database's time (a few times), then again every `refreshMs`; again: starts over. */
  async start(refreshMs = REFRESH_MS): Promise<void> {
    for (let i = 0; i < FIRST_SAMPLES; i++) this.keep(await this.read());
    clearInterval(this.timer);
    this.timer = setInterval(() => {
      this.read().then(
        (sample) => this.keep(sample, true),
        () => {}, // the database is away: count on from the last answer
      );
    }, refreshMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private keep(fresh: Sample, refresh = false): void {
    const kept = this.sample;
    if (!kept || fresh.roundTripMs <= kept.roundTripMs + (refresh ? ROUND_TRIP_SLACK_MS : 0)) {
      this.sample = fresh;
    }
  }

  private async read(): Promise<Sample> {
    const start = performance.now();
    const reply = await this.db.command({ hello: 1 }).catch((err: { code?: number }) => {
      if (err.code === 59) return this.db.command({ isMaster: 1 }); // CommandNotFound: before `hello`
      throw err;
    });
    const end = performance.now();
    const local = reply.localTime;
    if (!(local instanceof Date)) throw new Error("the database did not say its time (localTime)");
    return { databaseMs: local.getTime(), at: (start + end) / 2, roundTripMs: end - start };
  }
}
