// The CryptoProvider of the synchronous functions: node:crypto.
import { createHmac, createPrivateKey, createPublicKey, type KeyObject, sign, verify } from "node:crypto";
import { base64Url } from "./base64.js";
import type { WebhookPayload } from "./core.js";
import { PUBLIC_KEY_PREFIX, publicKeyBytes, secretKeyJwk } from "./keys.js";
import type { CryptoProvider } from "./signature.js";

/** HMAC-SHA256 over `<t>.<body>`; the body is hashed as given, never decoded or re-encoded. */
function hmacHex(secret: string, timestampText: string, payload: WebhookPayload): string {
  const mac = createHmac("sha256", secret).update(`${timestampText}.`);
  return (typeof payload === "string" ? mac.update(payload, "utf8") : mac.update(payload)).digest("hex");
}

/** The Standard Webhooks HMAC key: the base64 part of a `whsec_…` secret, decoded. */
function standardKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret, "base64");
}

/** Ed25519 signs the whole message at once (no streaming), so prefix and body become one buffer. */
function message(prefix: string, payload: WebhookPayload): Buffer {
  return typeof payload === "string"
    ? Buffer.from(prefix + payload, "utf8")
    : Buffer.concat([Buffer.from(prefix, "utf8"), payload]);
}

// Importing a key costs more than verifying with it, and a receiver uses the same one or two keys
// for every delivery: imported keys are kept, a bounded number in case keys are per tenant.
const MAX_CACHED_KEYS = 64;
const keyObjects = new Map<string, KeyObject>();

function keyObject(key: string): KeyObject {
  let object = keyObjects.get(key);
  if (object === undefined) {
    object = key.startsWith(PUBLIC_KEY_PREFIX)
      ? createPublicKey({
          key: { kty: "OKP", crv: "Ed25519", x: base64Url(publicKeyBytes(key)) },
          format: "jwk",
        })
      : createPrivateKey({ key: secretKeyJwk(key), format: "jwk" });
    if (keyObjects.size >= MAX_CACHED_KEYS) keyObjects.clear();
    keyObjects.set(key, object);
  }
  return object;
}

export const nodeCrypto: CryptoProvider<"sync"> = {
  computeSignatures(secrets, timestampText, payload) {
    // One secret is the common case; no array callback for it.
    if (secrets.length === 1) return [hmacHex(secrets[0] as string, timestampText, payload)];
    return secrets.map((s) => hmacHex(s, timestampText, payload));
  },
  hmacBase64(secrets, prefix, payload) {
    return secrets.map((s) => {
      const mac = createHmac("sha256", standardKey(s)).update(prefix);
      return (typeof payload === "string" ? mac.update(payload, "utf8") : mac.update(payload)).digest(
        "base64",
      );
    });
  },
  signEd25519(secretKeys, prefix, payload) {
    const data = message(prefix, payload);
    return secretKeys.map((key) => sign(null, data, keyObject(key)).toString("base64"));
  },
  verifyEd25519(publicKeys, prefix, payload, signatures) {
    const data = message(prefix, payload);
    let verified = false;
    for (const key of publicKeys)
      for (const s of signatures) if (verify(null, data, keyObject(key), s)) verified = true;
    return verified;
  },
};
