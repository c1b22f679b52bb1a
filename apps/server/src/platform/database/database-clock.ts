import type { Db, Document } from "mongodb";
import type { Clock } from "../clock.js";

/**
 * The database's time, read on this process's monotonic clock (docs/decisions.md, "One clock"):
 * what a fleet decides leases and due times by, so a process whose wall clock is a minute off
 * (a host that drifted) changes neither who holds a lane nor when a delivery is due. It asks the
 * database for its time (`hello`'s `localTime`; `isMaster` on servers without `hello`), takes the
 * answer as the time halfway through the round trip, and counts on from there with
 * `performance.now()`, which no change of the wall clock moves. It asks again every `refreshMs`,
 * keeping the answer whose round trip was shortest (the least uncertain) unless it is stale.
 * The first times it asks again come sooner (FIRST_REFRESH_MS, doubling up to `refreshMs`): a
 * process that starts on a busy machine reads the answers late, and an answer read late puts the
 * database's time that much behind (half the round trip).
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
/**
 * The first ask after start: then 2, 4, 8 and 16 s, then every `refreshMs`. In a CI run, a server
 * started while the machine was busy kept answers of 800 ms round trips, its clock 390 ms behind,
 * for the 30 s until it asked again: a recovery started meanwhile ended its window ("until now")
 * before the events just recorded.
 */
const FIRST_REFRESH_MS = 1_000;

export class DatabaseClock implements Clock {
  private sample: Sample | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** `hello`, or `isMaster` once the database refused `hello` (mongo-java-server). */
  private command: "hello" | "isMaster" = "hello";

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
    this.stopped = false;
    for (let i = 0; i < FIRST_SAMPLES; i++) this.keep(await this.read());
    this.refreshIn(Math.min(FIRST_REFRESH_MS, refreshMs), refreshMs);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /**
   * Asks again in `delayMs`, and after that twice as late each time, up to `refreshMs`. The early
   * asks only ever tighten the clock (a shorter round trip); the regular ones also follow the
   * database's time as the monotonic clock drifts from it, taking an answer a little less certain.
   */
  private refreshIn(delayMs: number, refreshMs: number): void {
    clearTimeout(this.timer);
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.read()
        .then(
          (sample) => this.keep(sample, delayMs >= refreshMs),
          () => {}, // the database is away: count on from the last answer
        )
        .finally(() => this.refreshIn(Math.min(delayMs * 2, refreshMs), refreshMs));
    }, delayMs);
    this.timer.unref();
  }

  private keep(fresh: Sample, followDrift = false): void {
    const kept = this.sample;
    if (!kept || fresh.roundTripMs <= kept.roundTripMs + (followDrift ? ROUND_TRIP_SLACK_MS : 0)) {
      this.sample = fresh;
    }
  }

  private async read(): Promise<Sample> {
    const start = performance.now();
    let reply: Document;
    try {
      reply = await this.db.command({ [this.command]: 1 });
    } catch (err) {
      // CommandNotFound: a server before `hello`. Asked again, timed alone: counting the refused
      // `hello` in the round trip would put the database's time one way's latency ahead.
      if ((err as { code?: number }).code !== 59 || this.command === "isMaster") throw err;
      this.command = "isMaster";
      return this.read();
    }
    const end = performance.now();
    const local = reply.localTime;
    if (!(local instanceof Date)) throw new Error("the database did not say its time (localTime)");
    return { databaseMs: local.getTime(), at: (start + end) / 2, roundTripMs: end - start };
  }
}
