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
  | "rcv"
  // A custom field definition's stored id; the API names a definition by its key.
  | "cfd";

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
/** In the lower half of the space: the counter starts there in each new millisecond. */
const randomPart = () => BigInt(`0x${randomBytes(11).toString("hex")}`) % (RANDOM_SPACE / 2n);

/**
 * The ids one idempotent request may make of each type (`withReplayableIds`): its block of the
 * counter. A batch makes at most a few thousand of one type; a block costs nothing but space, of
 * which the upper half of 62^14 is left for counting up.
 */
const BLOCK = 1n << 24n;

/**
 * Further back than this before the newest id made, a time given is an id dated on purpose (an
 * event recorded as of a past moment): it is not held up to the newest.
 */
const BACKDATED_MS = 1_000;

/** The process's position: the newest id's time and counter (docs/decisions.md, "Id layout"). */
let lastTime = -1;
let lastRandom = 0n;

/**
 * The next `step` positions of the process's order at `now`: its time and counter, after every
 * position taken before, even within one millisecond or across a small step back of the clock.
 */
function take(now: number, step: bigint): { time: number; counter: bigint } {
  if (now < lastTime - BACKDATED_MS) return { time: now, counter: randomPart() };
  if (now > lastTime || lastRandom + step >= RANDOM_SPACE) {
    // A new millisecond, or this one is full (then the next): the counter starts from chance.
    lastTime = now > lastTime ? now : lastTime + 1;
    lastRandom = randomPart() - 1n;
  }
  const counter = lastRandom + 1n;
  lastRandom += step;
  return { time: lastTime, counter };
}

const body = (time: number, counter: bigint) =>
  `${encode(BigInt(time), TIME_LENGTH)}${encode(counter, RANDOM_LENGTH)}`;

/**
 * A prefixed, time-ordered id (like a ULID): the creation time to the millisecond, then a
 * counter, so ids made later in this process always sort after earlier ones and "newest first"
 * is "highest id first". An id dated well in the past sorts at its own time.
 */
export function newId(prefix: IdPrefix, now = Date.now()): string {
  const replayable = replayableIds.getStore();
  // Not API keys: a replayed key id would need the key itself, which is never stored, so a
  // retried key creation makes a new key (the lost answer's key is never seen, and unusable).
  if (replayable && prefix !== "key") return replayable.next(prefix);
  const { time, counter } = take(now, 1n);
  return `${prefix}_${body(time, counter)}`;
}

/**
 * A block of the process's order for one idempotent request, as an id body (time and counter):
 * kept with the request's key, so the ids it makes (`withReplayableIds`) sort where it started
 * among the ids of every other request of this process, and the same on a rerun.
 */
export function newIdBlock(now = Date.now()): string {
  const { time, counter } = take(now, BLOCK);
  return body(time, counter);
}

/**
 * The ids of one request, the same each time it runs: the n-th id of each type is the n-th of the
 * request's block. A key reserved before blocks were kept has only its random seed: its ids count
 * up from a hash of it, stamped with the time it first ran.
 */
class ReplayableIds {
  private readonly counts = new Map<IdPrefix, bigint>();
  constructor(
    private readonly block: { time: number; counter: bigint } | { seed: string; firstRunAt: number },
  ) {}

  next(prefix: IdPrefix): string {
    const n = this.counts.get(prefix) ?? 0n;
    this.counts.set(prefix, n + 1n);
    if ("counter" in this.block) return `${prefix}_${body(this.block.time, this.block.counter + n)}`;
    const digest = createHash("sha256").update(`${this.block.seed}\n${prefix}`).digest("hex").slice(0, 22);
    const base = BigInt(`0x${digest}`) % (RANDOM_SPACE / 2n);
    return `${prefix}_${body(this.block.firstRunAt, base + n)}`;
  }
}

const replayableIds = new AsyncLocalStorage<ReplayableIds>();

/** ~47 bits: the children of one parent (an event's endpoints) never meet. */
const CHILD_LENGTH = 8;

/**
 * An id that sorts with `parent` (an id of this layout): the parent's time and counter, then a
 * hash of `seed`. The same every time it is made from the same parent and seed: for a record that
 * a repeated step (the relay running its hooks again) must find instead of making a second one,
 * and that lists in its parent's order (an event's deliveries, in the order the events happened).
 */
export function childId(prefix: IdPrefix, parent: string, seed: string): string {
  const parentBody = parent.slice(parent.indexOf("_") + 1);
  const digest = createHash("sha256").update(`${prefix}\n${seed}`).digest("hex").slice(0, 16);
  return `${prefix}_${parentBody}${encode(BigInt(`0x${digest}`) % 62n ** BigInt(CHILD_LENGTH), CHILD_LENGTH)}`;
}

/**
 * Runs `work` so that every `newId` inside it is taken from `block` (`newIdBlock`, kept with the
 * idempotency key) instead of the clock, in order. An idempotent request runs this way
 * (platform/http/idempotency.ts): if its process dies after the write but before the answer is
 * stored, the retry that takes its key over makes the very same ids, so its insert finds the
 * record the first run made instead of making a second one (and a second `*.created`). A key kept
 * before blocks were (`block` undefined) derives them from its `seed` and `firstRunAt`.
 */
export function withReplayableIds<T>(
  reservation: { block?: string; seed: string; firstRunAt: number },
  work: () => Promise<T>,
): Promise<T> {
  const { block, seed, firstRunAt } = reservation;
  const ids = block
    ? new ReplayableIds({ time: idTime(`_${block}`), counter: decode(block.slice(TIME_LENGTH)) })
    : new ReplayableIds({ seed, firstRunAt });
  return replayableIds.run(ids, work);
}

function decode(text: string): bigint {
  let value = 0n;
  for (const char of text) value = value * 62n + BigInt(ALPHABET.indexOf(char));
  return value;
}

/** The creation time (ms) an id carries: its first characters after the prefix. */
export function idTime(id: string): number {
  const start = id.indexOf("_") + 1;
  return Number(decode(id.slice(start, start + TIME_LENGTH)));
}
