// A new Ed25519 signing key pair in Standard Webhooks' forms, from node:crypto: what the Deskline
// server makes for an endpoint with `signing: "ed25519"`, what `deskline listen --signing ed25519`
// signs with, and what a test of a `v1a` receiver needs.
import { generateKeyPairSync } from "node:crypto";

/** An Ed25519 key pair: `secretKey` signs (keep it private), `publicKey` verifies (publish it). */
export interface SigningKeyPair {
  /** `whsk_` + base64 of the 32-byte seed followed by the 32-byte public key (Svix's form). */
  secretKey: string;
  /** `whpk_` + base64 of the 32-byte public key. */
  publicKey: string;
}

/**
 * Makes a new Ed25519 key pair. Sign with `secretKey` (`signPayload`, `signStandardWebhook`,
 * `deliveryHeaders`: the signatures are `v1a`), verify with `publicKey`.
 */
export function generateSigningKeyPair(): SigningKeyPair {
  // The raw halves, read from the JWK export (base64url), written as standard base64.
  const jwk = generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" });
  const seed = Buffer.from(jwk.d as string, "base64url");
  const publicKey = Buffer.from(jwk.x as string, "base64url");
  return {
    secretKey: `whsk_${Buffer.concat([seed, publicKey]).toString("base64")}`,
    publicKey: `whpk_${publicKey.toString("base64")}`,
  };
}
