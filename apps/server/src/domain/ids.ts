import { randomBytes } from "node:crypto";

/** Type prefixes of DESIGN.md §3. */
export type IdPrefix = "ws" | "key" | "con" | "tkt" | "conv" | "msg" | "we" | "evt" | "req" | "att";

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
let lastRandom = 0n;

/**
 * A prefixed, time-ordered id (like a ULID): ids made later in this process always sort after
 * earlier ones, even within one millisecond, so "newest first" is "highest id first".
 */
export function newId(prefix: IdPrefix, now = Date.now()): string {
  if (now <= lastTime) {
    lastRandom += 1n;
    if (lastRandom >= RANDOM_SPACE) {
      lastTime += 1;
      lastRandom = 0n;
    }
  } else {
    lastTime = now;
    lastRandom = BigInt(`0x${randomBytes(11).toString("hex")}`) % (RANDOM_SPACE / 2n);
  }
  return `${prefix}_${encode(BigInt(lastTime), TIME_LENGTH)}${encode(lastRandom, RANDOM_LENGTH)}`;
}

/** Does `value` look like an id of this type? (Cheap check before touching the database.) */
export function isId(prefix: IdPrefix, value: unknown): value is string {
  return (
    typeof value === "string" &&
    value.length === prefix.length + 1 + TIME_LENGTH + RANDOM_LENGTH &&
    value.startsWith(`${prefix}_`) &&
    /^[0-9A-Za-z]+$/.test(value.slice(prefix.length + 1))
  );
}
