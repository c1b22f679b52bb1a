import { randomBytes } from "node:crypto";
import { generateSigningKeyPair } from "@deskline/webhook-verifier";
import type { Schema } from "../../../spec/types.js";
import type { EndpointSecret } from "./at-rest.js";

/**
 * What an endpoint signs its deliveries with (docs/decisions.md "Public-key signatures"): a
 * `whsec_` secret (HMAC, `v1`) or an Ed25519 key pair, kept as its `whsk_` secret key (the seed
 * then the public key, base64, the form Svix's server takes) and its `whpk_` public key. Both are
 * entries of the endpoint's one list of secrets, sealed and rotated alike; the verifier package
 * tells them apart by prefix when it signs, so deliveries need no other branch.
 */

export type Signing = Schema<"WebhookEndpointSigning">;

/** A new entry of an endpoint's secrets, before its grace is known. */
export type NewSigningKey = Pick<EndpointSecret, "secret" | "public_key">;

/** `whsec_` + 32 random bytes, base64 (docs/design.md, Webhook delivery). */
export const newSecret = (): string => `whsec_${randomBytes(32).toString("base64")}`;

/** A fresh secret (HMAC) or key pair (Ed25519); the secret in the clear, for the caller to seal. */
export function newSigningKey(signing: Signing): NewSigningKey {
  if (signing === "hmac_sha256") return { secret: newSecret(), public_key: null };
  const pair = generateSigningKeyPair();
  return { secret: pair.secretKey, public_key: pair.publicKey };
}

/** The scheme of an endpoint: its current (first) entry's; a public key is kept only for Ed25519. */
export function signingOf(secrets: readonly Pick<EndpointSecret, "public_key">[]): Signing {
  return secrets[0]?.public_key ? "ed25519" : "hmac_sha256";
}

/**
 * What create and rotate answer as `secret`: an HMAC secret, shown this once; never an Ed25519
 * secret key (`null`: the public key, in every answer, is what receivers need).
 */
export const shownSecret = (key: NewSigningKey): string | null => (key.public_key ? null : key.secret);
