// The keys a caller hands in, sorted by what they sign or verify (docs/webhooks.md "Public-key
// signatures"): `whsec_…` (or any other string) is an HMAC secret, `whpk_…` an Ed25519 public key,
// `whsk_…` an Ed25519 secret key in Standard Webhooks' form, base64 of the 32-byte seed followed
// by the 32-byte public key (what Svix's server takes). No node imports: `/web` is built from it.

import { base64Url, decodeBase64, encodeBase64 } from "./base64.js";
import { secretList, type WebhookSecret } from "./core.js";
import { WebhookVerificationError } from "./errors.js";

export const PUBLIC_KEY_PREFIX = "whpk_";
export const SECRET_KEY_PREFIX = "whsk_";

/** The keys of one call: HMAC secrets as given, Ed25519 keys checked and decoded once. */
export interface SortedKeys {
  /** HMAC secrets (`whsec_…`), as given. */
  hmac: readonly string[];
  /** Ed25519 public keys, `whpk_…`; a `whsk_…` given to verify stands for its public half. */
  publicKeys: readonly string[];
  /** Ed25519 secret keys, `whsk_…` (signing only). */
  secretKeys: readonly string[];
  /** Per key in the order given, whether it is an Ed25519 one: a signer keeps the caller's order. */
  ed25519: readonly boolean[];
}

const NONE: readonly string[] = [];
function invalidKey(message: string): WebhookVerificationError {
  return new WebhookVerificationError("invalid_key", message);
}

/** The 32 raw bytes of a `whpk_…` key, or of the public half of a `whsk_…` key. */
export function publicKeyBytes(key: string): Uint8Array {
  if (key.startsWith(PUBLIC_KEY_PREFIX)) {
    const bytes = decodeBase64(key.slice(PUBLIC_KEY_PREFIX.length));
    if (bytes?.length !== 32) throw invalidKey("A whpk_ public key is not the base64 of 32 bytes");
    return bytes;
  }
  return secretKeyBytes(key).subarray(32);
}

/** The 64 bytes of a `whsk_…` key: the seed, then the public key. */
export function secretKeyBytes(key: string): Uint8Array {
  const bytes = decodeBase64(key.slice(SECRET_KEY_PREFIX.length));
  if (bytes?.length !== 64) {
    throw invalidKey("A whsk_ secret key is not the base64 of 64 bytes (seed, then public key)");
  }
  return bytes;
}

/** An Ed25519 private key as a JWK, which both node:crypto and WebCrypto import. */
export function secretKeyJwk(key: string): { kty: "OKP"; crv: "Ed25519"; d: string; x: string } {
  const bytes = secretKeyBytes(key);
  return {
    kty: "OKP",
    crv: "Ed25519",
    d: base64Url(bytes.subarray(0, 32)),
    x: base64Url(bytes.subarray(32)),
  };
}

/** The `whpk_…` form of a public key's raw bytes. */
export const publicKeyText = (bytes: Uint8Array): string => `${PUBLIC_KEY_PREFIX}${encodeBase64(bytes)}`;

const isEd25519 = (key: string) => key.startsWith(PUBLIC_KEY_PREFIX) || key.startsWith(SECRET_KEY_PREFIX);

/**
 * Sorts the keys of a verification or a signature. Every Ed25519 key is decoded here, so a
 * malformed one is `invalid_key` whatever the header holds. For `verify`, a `whsk_` key stands for
 * its public half; for `sign`, a `whpk_` key is refused: a public key cannot sign.
 */
export function sortKeys(secret: WebhookSecret, use: "verify" | "sign"): SortedKeys {
  // One HMAC secret is the common case: no arrays built for it.
  if (typeof secret === "string" && secret.length > 0 && !isEd25519(secret)) {
    return { hmac: [secret], publicKeys: NONE, secretKeys: NONE, ed25519: [false] };
  }
  const hmac: string[] = [];
  const publicKeys: string[] = [];
  const secretKeys: string[] = [];
  const ed25519: boolean[] = [];
  for (const key of secretList(secret)) {
    ed25519.push(isEd25519(key));
    if (!isEd25519(key)) hmac.push(key);
    else if (use === "verify") publicKeys.push(publicKeyText(publicKeyBytes(key)));
    else if (key.startsWith(SECRET_KEY_PREFIX)) {
      secretKeyBytes(key); // checked now: a malformed key fails before any signing
      secretKeys.push(key);
    } else
      throw invalidKey(
        "A whpk_ public key verifies deliveries but cannot sign them; sign with the whsk_ key",
      );
  }
  return { hmac, publicKeys, secretKeys, ed25519 };
}
