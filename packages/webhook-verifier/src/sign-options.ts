// Shared by the node:crypto and WebCrypto signers; no node imports.

/** Options of {@link signPayload} and {@link signPayloadAsync}. */
export interface SignOptions {
  /** The `t` to sign: a `Date` or Unix seconds. Default: the system clock. */
  timestamp?: Date | number;
  /**
   * The delivery's id, which a `v1a` item signs (`<id>.<t>.<payload>`). Default: the payload's
   * top-level `id`.
   */
  id?: string;
}

export function signTimestamp(options: SignOptions | undefined): number {
  const t = options?.timestamp;
  const seconds = t === undefined ? Date.now() / 1000 : t instanceof Date ? t.getTime() / 1000 : t;
  const whole = Math.floor(seconds);
  if (!Number.isSafeInteger(whole) || whole < 0) {
    throw new TypeError("timestamp must be a Date or a non-negative number of Unix seconds");
  }
  return whole;
}
