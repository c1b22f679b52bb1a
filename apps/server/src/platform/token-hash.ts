// The one way the server hashes a secret token (API keys, console links and sessions, operator
// tokens): stored as hex SHA-256 so a leaked database holds no usable token, and compared by
// digest in constant time so neither the length nor a common prefix shows in the timing.
import { createHash, timingSafeEqual } from "node:crypto";

/** The hex SHA-256 of a token: what the stores keep (and look up by) instead of the token. */
export const hashToken = (token: string): string => createHash("sha256").update(token).digest("hex");

/**
 * Whether two tokens are equal, in constant time: both are hashed first, so the buffers compared
 * are always 32 bytes and a length check cannot tell how long the expected token is.
 */
export function sameToken(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

const digest = (token: string): Buffer => createHash("sha256").update(token).digest();
