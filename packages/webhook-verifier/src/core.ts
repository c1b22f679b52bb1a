// Runtime-neutral pieces shared by the node:crypto and the WebCrypto implementations. Nothing here
// may import a node module: the `/web` and `/fetch` entries are built from it.
import { decodeBase64 } from "./base64.js";
import { WebhookVerificationError } from "./errors.js";

/** The raw request body exactly as received: a string, a Buffer or any Uint8Array. */
export type WebhookPayload = string | Uint8Array;

/**
 * One signing secret (`whsec_…`) or public key (`whpk_…`), or several during a rotation: a header
 * passes when any of its `v1` signatures matches any of the secrets or any of its `v1a`
 * signatures verifies with any of the public keys. For `v1`, the whole string, prefix included, is
 * the HMAC key. Signing takes `whsec_…` and `whsk_…` (an Ed25519 secret key) alike.
 */
export type WebhookSecret = string | readonly string[];

/** Options of {@link verifySignature}, {@link constructEvent} and their async twins. */
export interface VerifyOptions {
  /**
   * Largest accepted distance, in seconds, between `now` and the header's `t`, in the past or in
   * the future. Default 300. `Infinity` turns the check off, e.g. to replay a stored
   * delivery in a test.
   */
  toleranceSeconds?: number;
  /**
   * The current time, for tests: a `Date`, or a number of **Unix seconds** (not milliseconds).
   * Default: the system clock.
   */
  now?: Date | number;
  /**
   * The delivery's id (`Service-Delivery`, the same as `webhook-id`): a `v1a` item of
   * `Service-Signature` signs `<id>.<t>.<payload>`, the Standard Webhooks string. Default: the
   * payload's top-level `id`, which is that id on every Deskline delivery.
   */
  id?: string;
}

/**
 * The id a `v1a` signs: the one given, else the payload's top-level `id` (a Deskline event's id
 * is its delivery's `Service-Delivery` and `webhook-id`); undefined when the payload has none.
 */
export function signedIdOf(payload: WebhookPayload, given: string | undefined): string | undefined {
  if (given !== undefined) return given;
  try {
    const text = typeof payload === "string" ? payload : new TextDecoder().decode(payload);
    const id = (JSON.parse(text) as { id?: unknown } | null)?.id;
    return typeof id === "string" ? id : undefined;
  } catch {
    return undefined;
  }
}

/** Header values longer than this are refused before any splitting, so a hostile header costs O(1). */
export const MAX_HEADER_LENGTH = 8192;
/** More `v1` and `v1a` items than this is no rotation the server would ever produce. */
export const MAX_SIGNATURES = 16;
/** Default of {@link VerifyOptions.toleranceSeconds}. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

export interface ParsedHeader {
  /** The `t` value exactly as sent: the signed string starts with it, never a re-rendering. */
  timestampText: string;
  timestamp: number;
  /** `v1` values, each checked to be 64 hex digits, lower-cased. */
  signatures: string[];
  /** `v1a` values (Ed25519), each decoded from base64 and checked to be 64 bytes. */
  asymmetric: Uint8Array[];
}

const NO_ASYMMETRIC: Uint8Array[] = [];

const TIMESTAMP = /^[0-9]{1,15}$/;
/**
 * `t=<digits>,v1=<64 lowercase hex>`, the exact form the Deskline server sends, checked by char
 * codes: a regex exec with captures, or even Number(), costs a visible share of verifying a 1 KiB
 * body. Any header this accepts gets the same result from the general parser.
 */
function parseCanonical(header: string): ParsedHeader | undefined {
  const comma = header.indexOf(",");
  if (comma < 3 || comma > 17 || header.length !== comma + 68) return undefined;
  if (header.charCodeAt(0) !== 116 /* t */ || header.charCodeAt(1) !== 61 /* = */) return undefined;
  let timestamp = 0;
  for (let i = 2; i < comma; i++) {
    const c = header.charCodeAt(i);
    if (c < 48 || c > 57) return undefined;
    timestamp = timestamp * 10 + (c - 48);
  }
  if (!header.startsWith("v1=", comma + 1)) return undefined;
  for (let i = comma + 4; i < header.length; i++) {
    const c = header.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return undefined;
  }
  return {
    timestampText: header.slice(2, comma),
    timestamp,
    signatures: [header.slice(comma + 4)],
    asymmetric: NO_ASYMMETRIC,
  };
}
const SIGNATURE = /^[0-9a-fA-F]{64}$/;

export function secretList(secret: WebhookSecret): readonly string[] {
  const list = typeof secret === "string" ? [secret] : secret;
  if (!Array.isArray(list) || list.length === 0) {
    throw new WebhookVerificationError("missing_secret", "No webhook signing secret was configured");
  }
  for (const s of list) {
    // An empty key makes the HMAC computable by anyone, so it is refused rather than "tried".
    if (typeof s !== "string" || s.length === 0) {
      throw new WebhookVerificationError(
        "missing_secret",
        "A webhook signing secret is empty or not a string",
      );
    }
  }
  return list;
}

export function checkPayload(payload: unknown): asserts payload is WebhookPayload {
  if (typeof payload !== "string" && !(payload instanceof Uint8Array)) {
    throw new WebhookVerificationError(
      "invalid_payload_type",
      "The payload must be the raw request body (string, Buffer or Uint8Array); was a JSON body parser run before verification?",
    );
  }
}

export function parseSignatureHeader(header: unknown): ParsedHeader {
  const text = checkHeaderText(header);
  const canonical = parseCanonical(text);
  if (canonical !== undefined) return canonical;
  const { timestampText, signatures, asymmetric } = readItems(text);
  return {
    timestampText,
    timestamp: Number(timestampText),
    signatures: signatures.map(checkSignature),
    asymmetric: asymmetric.map(checkAsymmetricSignature),
  };
}

/** The header as a string of a bounded length, before any splitting. */
function checkHeaderText(header: unknown): string {
  if (header === undefined || header === null) {
    throw new WebhookVerificationError("missing_header", "The Service-Signature header is missing");
  }
  if (typeof header !== "string") {
    throw new WebhookVerificationError("malformed_header", "The Service-Signature header is not a string");
  }
  if (header.length > MAX_HEADER_LENGTH) {
    throw new WebhookVerificationError(
      "malformed_header",
      `The Service-Signature header is longer than ${MAX_HEADER_LENGTH} characters`,
    );
  }
  return header;
}

/**
 * The general parser: the `t` item and the `v1` and `v1a` items of `key=value,…`, in any order and
 * spacing.
 */
function readItems(header: string): { timestampText: string; signatures: string[]; asymmetric: string[] } {
  let timestampText: string | undefined;
  const signatures: string[] = [];
  const asymmetric: string[] = [];
  let sawItem = false;
  for (let start = 0; start <= header.length; ) {
    let end = header.indexOf(",", start);
    if (end === -1) end = header.length;
    const item = readItem(header.slice(start, end));
    start = end + 1;
    if (item === undefined) continue;
    sawItem = true;
    if (item.key === "t") {
      if (timestampText !== undefined) {
        throw new WebhookVerificationError(
          "malformed_header",
          "The Service-Signature header has several t items",
        );
      }
      timestampText = item.value;
    } else if (item.key === "v1" || item.key === "v1a") {
      if (signatures.length + asymmetric.length === MAX_SIGNATURES) {
        throw new WebhookVerificationError(
          "too_many_signatures",
          `The Service-Signature header has more than ${MAX_SIGNATURES} v1 and v1a signatures`,
        );
      }
      (item.key === "v1" ? signatures : asymmetric).push(item.value);
    }
    // Unknown keys (v0, future schemes) are ignored on purpose: the sender may add schemes.
  }
  if (!sawItem) {
    throw new WebhookVerificationError("missing_header", "The Service-Signature header is empty");
  }
  const checked = checkTimestamp(timestampText);
  if (signatures.length + asymmetric.length === 0) {
    throw new WebhookVerificationError(
      "missing_signature",
      "The Service-Signature header has no v1 (nor v1a) signature",
    );
  }
  return { timestampText: checked, signatures, asymmetric };
}

/** One `key=value` item, trimmed; `undefined` for an empty one ("a=1,,b=2", a trailing comma). */
function readItem(item: string): { key: string; value: string } | undefined {
  const eq = item.indexOf("=");
  if (eq === -1) {
    // Empty items are tolerated; anything else without "=" is garbage.
    if (item.trim() === "") return undefined;
    throw new WebhookVerificationError("malformed_header", "A Service-Signature item is not key=value");
  }
  const key = item.slice(0, eq).trim();
  if (key === "") {
    throw new WebhookVerificationError("malformed_header", "A Service-Signature item has an empty key");
  }
  return { key, value: item.slice(eq + 1).trim() };
}

function checkTimestamp(timestampText: string | undefined): string {
  if (timestampText === undefined) {
    throw new WebhookVerificationError("missing_timestamp", "The Service-Signature header has no t item");
  }
  if (!TIMESTAMP.test(timestampText)) {
    throw new WebhookVerificationError(
      "invalid_timestamp",
      "The Service-Signature timestamp is not a decimal integer of Unix seconds",
    );
  }
  return timestampText;
}

/** A `v1` value as 64 lowercase hex digits. */
function checkSignature(signature: string): string {
  if (!SIGNATURE.test(signature)) {
    throw new WebhookVerificationError(
      "invalid_signature_format",
      "A v1 signature is not 64 hexadecimal digits (HMAC-SHA256)",
    );
  }
  // Uppercase hex is accepted; the comparison is done on lowercase, as the HMACs are rendered.
  return signature.toLowerCase();
}

/** An Ed25519 signature (`v1a`, in either header) as its 64 bytes. */
export function checkAsymmetricSignature(signature: string): Uint8Array {
  const bytes = decodeBase64(signature);
  if (bytes?.length !== 64) {
    throw new WebhookVerificationError(
      "invalid_signature_format",
      "A v1a signature is not the base64 of 64 bytes (Ed25519)",
    );
  }
  return bytes;
}

export function checkTolerance(timestamp: number, options: VerifyOptions | undefined): number {
  const tolerance = options?.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (typeof tolerance !== "number" || Number.isNaN(tolerance) || tolerance < 0) {
    throw new TypeError("toleranceSeconds must be a non-negative number of seconds");
  }
  const now = options?.now;
  const nowSeconds =
    now === undefined
      ? Math.floor(Date.now() / 1000)
      : now instanceof Date
        ? Math.floor(now.getTime() / 1000)
        : Math.floor(now);
  if (Number.isNaN(nowSeconds)) throw new TypeError("now must be a valid Date or a number of Unix seconds");
  if (Math.abs(nowSeconds - timestamp) > tolerance) {
    throw new WebhookVerificationError(
      "timestamp_out_of_tolerance",
      `The Service-Signature timestamp is more than ${tolerance} seconds ${timestamp < nowSeconds ? "old" : "in the future"}`,
    );
  }
  return timestamp;
}

export function mismatch(): WebhookVerificationError {
  return new WebhookVerificationError(
    "signature_mismatch",
    "No signature matches the payload and the secret or public key; is the body the raw, unmodified request body?",
  );
}
