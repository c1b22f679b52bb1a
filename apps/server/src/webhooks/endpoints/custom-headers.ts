import { DomainError } from "../../platform/errors.js";

/**
 * Custom headers of an endpoint (docs/decisions.md, "Custom delivery headers"): what a receiver's
 * gateway checks beside the signature. Pure rules: which names a delivery owns and so refuses,
 * how a PATCH merges into the stored set (RFC 7396, by name, case-insensitively), and the limit.
 * The spec checks each name is an HTTP token and each value free of control characters; the
 * store seals the values (store.ts) and the delivery sends them (delivery/attempt.ts).
 */

/** At most this many headers per endpoint. */
export const MAX_CUSTOM_HEADERS = 20;

/** A stored header: its name as given, its value (sealed when the server has a key). */
export interface CustomHeader {
  name: string;
  value: string;
}

// The hop-by-hop headers (RFC 9110 7.6.1, and the older Keep-Alive and Proxy-Connection), and
// Expect, which would change how the request is sent.
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "expect",
]);

/** Why a delivery cannot carry a header of this name, or undefined when it can. */
export function ownedByDelivery(name: string): string | undefined {
  const lower = name.toLowerCase();
  if (lower === "host" || lower === "user-agent") return "every delivery sets it";
  if (lower.startsWith("content-")) return "it describes the body, which the delivery sets";
  if (lower.startsWith("service-") || lower.startsWith("webhook-")) return "it carries the signature";
  if (HOP_BY_HOP.has(lower)) return "it is a hop-by-hop header";
  return undefined;
}

const invalid = (message: string, param: string) =>
  new DomainError("invalid", "parameter_invalid", message, { param });

/**
 * Refuses the names a delivery owns and names given twice in different case, naming the header
 * (`headers.Host`): the body's `headers` on create or update.
 */
export function checkHeaderNames(headers: Record<string, unknown>): void {
  const seen = new Map<string, string>();
  for (const name of Object.keys(headers)) {
    const owned = ownedByDelivery(name);
    if (owned) throw invalid(`\`headers.${name}\` cannot be set: ${owned}.`, `headers.${name}`);
    const other = seen.get(name.toLowerCase());
    if (other !== undefined) {
      throw invalid(
        `\`headers\` names ${other} and ${name}: header names ignore case; keep one.`,
        `headers.${name}`,
      );
    }
    seen.set(name.toLowerCase(), name);
  }
}

/**
 * The stored set after a PATCH's `headers`: a value sets (or replaces, whatever the case of the
 * stored name) a header, `null` removes it, others stay. `seal` makes the stored form of a new
 * value. Refuses a result of more than MAX_CUSTOM_HEADERS. Sorted by name, as endpoints show them.
 */
export function mergeHeaders(
  current: readonly CustomHeader[],
  patch: Record<string, string | null>,
  seal: (value: string) => string,
): CustomHeader[] {
  const byName = new Map(current.map((header) => [header.name.toLowerCase(), header]));
  for (const [name, value] of Object.entries(patch)) {
    if (value === null) byName.delete(name.toLowerCase());
    else byName.set(name.toLowerCase(), { name, value: seal(value) });
  }
  if (byName.size > MAX_CUSTOM_HEADERS) {
    throw invalid(
      `An endpoint carries at most ${MAX_CUSTOM_HEADERS} custom headers; this would make ${byName.size}.`,
      "headers",
    );
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}
