/**
 * When a failed delivery attempt is tried again (DESIGN.md §6): the delays between attempts, read
 * from `WEBHOOK_RETRY_DELAYS`, and the ±20 % jitter that keeps a burst of failures from coming
 * back as a burst. Pure: the random source is a parameter.
 */

/** Seed §8: up to 4 retries after the first attempt. */
export const MAX_RETRIES = 4;

/** DESIGN.md §6: 1 min, 5 min, 30 min, 2 h. */
export const DEFAULT_RETRY_DELAYS = "1m,5m,30m,2h";

/** ±20 %: each delay is multiplied by a factor in [0.8, 1.2). */
export const JITTER = 0.2;

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;
const DELAY = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;

/**
 * Parses a list like `1m,5m,30m,2h` or `50ms,50ms` (units `ms`, `s`, `m`, `h`) into milliseconds.
 * One to four delays; the number of delays is the number of retries.
 * @throws {Error} naming the entry that is wrong.
 */
export function parseRetryDelays(text: string): number[] {
  const entries = text.split(",").map((entry) => entry.trim());
  if (entries.length > MAX_RETRIES) {
    throw new Error(`at most ${MAX_RETRIES} retry delays are allowed, got ${entries.length}`);
  }
  return entries.map((entry) => {
    const match = DELAY.exec(entry);
    if (!match) throw new Error(`${JSON.stringify(entry)} is not a delay like 50ms, 30s, 5m or 2h`);
    const ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
    if (!Number.isSafeInteger(Math.round(ms))) throw new Error(`${JSON.stringify(entry)} is too long`);
    return Math.round(ms);
  });
}

/** A delay with jitter; `random` returns a number in [0, 1) like Math.random. */
export function withJitter(delayMs: number, random: () => number = Math.random): number {
  return Math.round(delayMs * (1 - JITTER + 2 * JITTER * random()));
}

/**
 * The wait before attempt `nextAttempt` (2 for the first retry), or null when the attempt before
 * it was the last one the schedule allows.
 */
export function retryDelay(
  delays: readonly number[],
  nextAttempt: number,
  random: () => number = Math.random,
): number | null {
  const delay = delays[nextAttempt - 2];
  return delay === undefined ? null : withJitter(delay, random);
}
