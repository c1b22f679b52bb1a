// The Standard Webhooks scheme (https://www.standardwebhooks.com/) over a CryptoProvider, signing
// and verifying, written once for node:crypto and WebCrypto: `webhook-signature` is a
// space-separated list of `v1,<base64 HMAC-SHA256>` and `v1a,<base64 Ed25519>`, each over
// `<webhook-id>.<webhook-timestamp>.<body>`. No node imports: `/web` is built from it.
import {
  checkAsymmetricSignature,
  checkPayload,
  checkTolerance,
  MAX_HEADER_LENGTH,
  MAX_SIGNATURES,
  mismatch,
  type VerifyOptions,
  type WebhookPayload,
  type WebhookSecret,
} from "./core.js";
import { WebhookVerificationError } from "./errors.js";
import { sortKeys } from "./keys.js";
import { type SignOptions, signTimestamp } from "./sign-options.js";
import { andThen, anyEqual, type CryptoProvider, signEach, thenBoth } from "./signature.js";

/** The three headers of a Standard Webhooks delivery. */
export interface StandardWebhookHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

/**
 * Where the verifier reads the three headers: a fetch `Headers` (anything with `get`), or a plain
 * object with lower-case names such as node's `req.headers`.
 */
export type StandardWebhookHeaderSource =
  | StandardWebhookHeaders
  | { get(name: string): string | null }
  | Readonly<Record<string, string | readonly string[] | null | undefined>>;

type Provider = CryptoProvider<"sync"> | CryptoProvider<"async">;

/** The headers for `payload` signed with each key in turn (HMAC secrets `v1`, `whsk_` keys `v1a`). */
export function signStandard(
  provider: Provider,
  id: string,
  payload: WebhookPayload,
  secret: WebhookSecret,
  options: SignOptions | undefined,
): StandardWebhookHeaders | Promise<StandardWebhookHeaders> {
  const timestamp = String(signTimestamp(options));
  const prefix = `${id}.${timestamp}.`;
  const items = signEach(
    provider,
    secret,
    (secrets) => provider.hmacBase64(secrets, prefix, payload),
    prefix,
    payload,
    (signature, ed25519) => `${ed25519 ? "v1a" : "v1"},${signature}`,
  );
  return andThen(items, (list) => ({
    "webhook-id": id,
    "webhook-timestamp": timestamp,
    "webhook-signature": list.join(" "),
  }));
}

const TIMESTAMP = /^[0-9]{1,15}$/;
const HMAC_BASE64 = /^[A-Za-z0-9+/]{43}=$/;

function header(headers: StandardWebhookHeaderSource, name: keyof StandardWebhookHeaders): string {
  const value =
    "get" in headers && typeof headers.get === "function"
      ? (headers as { get(name: string): string | null }).get(name)
      : (headers as Record<string, unknown>)[name];
  if (value === undefined || value === null || value === "") {
    throw new WebhookVerificationError("missing_header", `The ${name} header is missing`);
  }
  if (typeof value !== "string") {
    throw new WebhookVerificationError("malformed_header", `The ${name} header is not one string`);
  }
  if (value.length > MAX_HEADER_LENGTH) {
    throw new WebhookVerificationError(
      "malformed_header",
      `The ${name} header is longer than ${MAX_HEADER_LENGTH} characters`,
    );
  }
  return value;
}

interface StandardSignatures {
  v1: string[];
  v1a: Uint8Array[];
}

/** The `v1` and `v1a` items of `webhook-signature`; other versions are ignored, as the spec asks. */
function readSignatures(text: string): StandardSignatures {
  const found: StandardSignatures = { v1: [], v1a: [] };
  for (const item of text.split(" ")) {
    if (item === "") continue;
    const comma = item.indexOf(",");
    const version = comma === -1 ? item : item.slice(0, comma);
    if (version !== "v1" && version !== "v1a") continue;
    if (found.v1.length + found.v1a.length === MAX_SIGNATURES) {
      throw new WebhookVerificationError(
        "too_many_signatures",
        `The webhook-signature header has more than ${MAX_SIGNATURES} v1 and v1a signatures`,
      );
    }
    const value = item.slice(comma + 1);
    if (version === "v1a") found.v1a.push(checkAsymmetricSignature(value));
    else if (HMAC_BASE64.test(value)) found.v1.push(value);
    else {
      throw new WebhookVerificationError(
        "invalid_signature_format",
        "A v1 signature is not the base64 of 32 bytes (HMAC-SHA256)",
      );
    }
  }
  if (found.v1.length + found.v1a.length === 0) {
    throw new WebhookVerificationError(
      "missing_signature",
      "The webhook-signature header has no v1 or v1a signature",
    );
  }
  return found;
}

/**
 * Checks the Standard Webhooks headers of a delivery: any `v1` against any HMAC secret, any `v1a`
 * against any public key, then the timestamp tolerance. Returns the verified timestamp.
 */
export function verifyStandard(
  provider: Provider,
  payload: WebhookPayload,
  headers: StandardWebhookHeaderSource,
  secret: WebhookSecret,
  options: VerifyOptions | undefined,
): number | Promise<number> {
  const keys = sortKeys(secret, "verify");
  checkPayload(payload);
  if (headers === null || typeof headers !== "object") {
    throw new WebhookVerificationError("missing_header", "No headers were given");
  }
  const id = header(headers, "webhook-id");
  const timestampText = header(headers, "webhook-timestamp");
  if (!TIMESTAMP.test(timestampText)) {
    throw new WebhookVerificationError(
      "invalid_timestamp",
      "The webhook-timestamp header is not a decimal integer of Unix seconds",
    );
  }
  const given = readSignatures(header(headers, "webhook-signature"));
  const prefix = `${id}.${timestampText}.`;
  const hmacs =
    keys.hmac.length > 0 && given.v1.length > 0 ? provider.hmacBase64(keys.hmac, prefix, payload) : [];
  const verified =
    keys.publicKeys.length > 0 && given.v1a.length > 0
      ? provider.verifyEd25519(keys.publicKeys, prefix, payload, given.v1a)
      : false;
  return thenBoth(hmacs, verified, (expected, asymmetricOk) => {
    if (!anyEqual(expected, given.v1) && !asymmetricOk) throw mismatch();
    return checkTolerance(Number(timestampText), options);
  });
}
