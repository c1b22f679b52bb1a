// Idempotency keys for import rows, derived (never random) from the file and the row's content:
// a run killed after sending a create and started again sends the same key for the same row, and
// the server replays the first answer instead of creating the contact twice.
import { createHash } from "node:crypto";
import { basename } from "node:path";

/** JSON with object keys sorted, so the same row always hashes the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(",")}}`;
  }
  return JSON.stringify(value);
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
