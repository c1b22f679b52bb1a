import { AsyncLocalStorage } from "node:async_hooks";
import { createHash, randomBytes } from "node:crypto";

/** Type prefixes (docs/design.md, API conventions). */
export type IdPrefix =
  | "ws"
  | "key"
  | "con"
  | "tkt"
  | "conv"
  | "msg"
  | "we"
  | "evt"
  | "req"
  | "att"
  | "dlv"
  | "rcv";

// 0-9A-Za-z is in ASCII order, so comparing two ids as strings compares their creation times.
const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const TIME_LENGTH = 8; // 62^8 ms reaches the year 8900
const RANDOM_LENGTH = 14; // ~83 bits

function encode(value: bigint, length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) {
    out = ALPHABET[Number(value % 62n)] + out;
    value /= 62n;
  }
  return out;
}

const RANDOM_SPACE = 62n ** BigInt(RANDOM_LENGTH);
let lastTime = -1;
/** In the lower half of the space: ids made in the same millisecond count up from it. */
const randomPart = () => BigInt(`0x${randomBytes(11).toString("hex")}`) % (RANDOM_SPACE / 2n);
let lastRandom = 0n;

/**
 * Further back than this before the newest id made, a time given is an id dated on purpose (an
 * event recorded as of a past moment): it is not held up to the newest.
 */
const BACKDATED_MS = 1_000;

/**
 * A prefixed, time-ordered id (like a ULID): ids made later in this process always sort after
 * earlier ones, even within one millisecond or across a small step back of the clock, so "newest
 * first" is "highest id first". An id dated well in the past sorts at its own time.
 */
export function newId(prefix: IdPrefix, now = Date.now()): string {
  const replayable = replayableIds.getStore();
  // Not API keys: a replayed key id would need the key itself, which is never stored, so a
  // retried key creation makes a new key (the lost answer's key is never seen, and unusable).
  if (replayable && prefix !== "key") return replayable.next(prefix);
  if (now < lastTime - BACKDATED_MS) {
    return `${prefix}_${encode(BigInt(now), TIME_LENGTH)}${encode(randomPart(), RANDOM_LENGTH)}`;
  }
  if (now <= lastTime) {
    lastRandom += 1n;
    if (lastRandom >= RANDOM_SPACE) {
      lastTime += 1;
      lastRandom = 0n;
    }
  } else {
    lastTime = now;
    lastRandom = randomPart();
  }
  return `${prefix}_${encode(BigInt(lastTime), TIME_LENGTH)}${encode(lastRandom, RANDOM_LENGTH)}`;
}

/**
 * The ids of one request, the same each time it runs: the n-th id of each type is made from the
 * request's seed, stamped with the time it first ran.
 */
class ReplayableIds {
  private readonly counts = new Map<IdPrefix, bigint>();
  constructor(
    private readonly seed: string,
    private readonly firstRunAt: number,
  ) {}

  next(prefix: IdPrefix): string {
    const n = this.counts.get(prefix) ?? 0n;
    this.counts.set(prefix, n + 1n);
    // A base from the seed in the lower half of the space, plus the count: a request's ids of
    // one type still sort in the order it made them, as newId's do.
    const digest = createHash("sha256").update(`${this.seed}\n${prefix}`).digest("hex").slice(0, 22);
    const base = BigInt(`0x${digest}`) % (RANDOM_SPACE / 2n);
    return `${prefix}_${encode(BigInt(this.firstRunAt), TIME_LENGTH)}${encode(base + n, RANDOM_LENGTH)}`;
  }
}

const replayableIds = new AsyncLocalStorage<ReplayableIds>();

/**
 * An id that is the same every time it is made from the same `seed` and time: for a record that
 * a repeated step (the relay running its hooks again) must find instead of making a second one.
 * Time-ordered like newId's; the unique part is a hash of the seed.
 */
export function derivedId(prefix: IdPrefix, time: number, seed: string): string {
  const digest = createHash("sha256").update(`${prefix}\n${seed}`).digest("hex").slice(0, 22);
  return `${prefix}_${encode(BigInt(time), TIME_LENGTH)}${encode(BigInt(`0x${digest}`) % RANDOM_SPACE, RANDOM_LENGTH)}`;
}

/**
 * Runs `work` so that every `newId` inside it is derived from `seed` (random, kept with the
 * idempotency key) and `firstRunAt` instead of the clock and chance. An idempotent request runs this way (platform/http/idempotency.ts): if its process
 * dies after the write but before the answer is stored, the retry that takes its key over makes
 * the very same ids, so its insert finds the record the first run made instead of making a
 * second one (and a second `*.created`).
 */
export function withReplayableIds<T>(seed: string, firstRunAt: number, work: () => Promise<T>): Promise<T> {
  return replayableIds.run(new ReplayableIds(seed, firstRunAt), work);
}

/** The creation time (ms) an id carries: its first characters after the prefix. */
export function idTime(id: string): number {
  const time = id.slice(id.indexOf("_") + 1, id.indexOf("_") + 1 + TIME_LENGTH);
  let value = 0;
  for (const char of time) value = value * 62 + ALPHABET.indexOf(char);
  return value;
}
