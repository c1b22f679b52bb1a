/**
 * When a failed delivery attempt is tried again: the delays between attempts (the setting
 * `WEBHOOK_RETRY_DELAYS`, default 1m,5m,30m,2h, declared and checked in webhooks/settings.ts),
 * and the ±20 % jitter that keeps a burst of failures from coming back as a burst. Pure: the
 * random source is a parameter.
 */

/** ±20 %: each delay is multiplied by a factor in [0.8, 1.2). */
export const JITTER = 0.2;

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
