// Idempotency keys for import rows, derived (never random) from the file and the row's content:
// a run killed after sending a create and started again sends the same key for the same row, and
// the server replays the first answer instead of creating the contact twice.
import { createHash } from "node:crypto";
import { basename } from "node:path";
import { stringify } from "safe-stable-stringify";

/**
 * JSON with object keys sorted, so the same row always hashes the same: safe-stable-stringify,
 * as the server's request fingerprint (apps/server/src/platform/http/idempotency.ts), so both read a body
 * alike (an `undefined` member is left out, as JSON.stringify leaves it out).
 */
export function canonicalJson(value: unknown): string {
  return stringify(value ?? null);
}

/**
 * `import-<sha256 of (file name, body)>`. The file's name, not its path, so the same export moved
 * to another directory is still the same import; `-` (stdin) names all piped input alike. The key
 * changes with the row's content, so an edited row is a new request, never `idempotency_key_reused`.
 */
export function rowIdempotencyKey(file: string, body: unknown, salt = ""): string {
  const hash = createHash("sha256")
    .update(file === "-" ? "-" : basename(file))
    .update("\0")
    .update(canonicalJson(body))
    .update(salt ? `\0${salt}` : "")
    .digest("base64url");
  return `import-${hash}`;
}
