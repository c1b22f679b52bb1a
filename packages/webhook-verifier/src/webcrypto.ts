// The WebCrypto implementation, for runtimes without node:crypto (Deno, Bun, Cloudflare Workers,
// browsers). This module and everything it imports must stay free of node imports: it is the
// `/web` entry and the base of `/fetch`.
import { decodeBase64, encodeBase64 } from "./base64.js";
import type { VerifyOptions, WebhookPayload, WebhookSecret } from "./core.js";
import { type DesklineEvent, parseEvent } from "./event.js";
import { publicKeyBytes, secretKeyJwk } from "./keys.js";
import type { SignOptions } from "./sign-options.js";
import { type CryptoProvider, signHeader, verifyHeader } from "./signature.js";
import { type StandardWebhookHeaderSource, verifyStandard } from "./standard-signature.js";

type Algorithm = { name: "HMAC"; hash: "SHA-256" } | { name: "Ed25519" };

// Structural, so that neither the DOM lib nor @types/node is needed to type-check or consume this.
interface Subtle {
  importKey(
    format: "raw" | "jwk",
    keyData: Uint8Array | object,
    algorithm: Algorithm,
    extractable: false,
    usages: ["sign"] | ["verify"],
  ): Promise<unknown>;
  sign(algorithm: "HMAC" | "Ed25519", key: unknown, data: Uint8Array): Promise<ArrayBuffer>;
  verify(algorithm: "Ed25519", key: unknown, signature: Uint8Array, data: Uint8Array): Promise<boolean>;
}

const encoder = new TextEncoder();

function subtle(): Subtle {
  const s = (globalThis as { crypto?: { subtle?: Subtle } }).crypto?.subtle;
  if (!s) throw new Error("globalThis.crypto.subtle is not available in this runtime");
  return s;
}

// importKey costs about as much as signing a small body, and a receiver uses the same one or two
// keys for every delivery, so imported keys are kept (the resolved ones apart, so that the hot
// path awaits nothing but the signature). Bounded in case keys are per tenant. Named by use and
// key (`v1:whsec_…`): one secret is two HMAC keys, the whole string and its decoded bytes.
const MAX_CACHED_KEYS = 64;
const pending = new Map<string, Promise<unknown>>();
const ready = new Map<string, unknown>();

function cachedKey(name: string, load: () => Promise<unknown>): unknown {
  const key = ready.get(name);
  if (key !== undefined) return key;
  let promise = pending.get(name);
  if (promise === undefined) {
    if (pending.size >= MAX_CACHED_KEYS) {
      pending.clear();
      ready.clear();
    }
    promise = load().then(
      (imported) => {
        if (pending.get(name) === promise) ready.set(name, imported);
        return imported;
      },
      (error: unknown) => {
        // A failed import must not be remembered.
        pending.delete(name);
        throw error;
      },
    );
    pending.set(name, promise);
  }
  return promise;
}

const HMAC = { name: "HMAC", hash: "SHA-256" } as const;
const ED25519 = { name: "Ed25519" } as const;

/** The key of a Service-Signature `v1`: the whole secret string. */
const hmacKey = (secret: string) =>
  cachedKey(`v1:${secret}`, () => subtle().importKey("raw", encoder.encode(secret), HMAC, false, ["sign"]));

/** The key of a Standard Webhooks `v1`: the base64 after `whsec_`, decoded. */
const standardHmacKey = (secret: string) =>
  cachedKey(`sw:${secret}`, () => {
    const text = secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret;
    return subtle().importKey("raw", decodeBase64(text) ?? encoder.encode(text), HMAC, false, ["sign"]);
  });

const publicKey = (key: string) =>
  cachedKey(key, () => subtle().importKey("raw", publicKeyBytes(key), ED25519, false, ["verify"]));

const privateKey = (key: string) =>
  cachedKey(key, () => subtle().importKey("jwk", secretKeyJwk(key), ED25519, false, ["sign"]));

async function resolved(key: unknown): Promise<unknown> {
  return key instanceof Promise ? await key : key;
}

/** `<prefix><body>` as one buffer, since WebCrypto signs a single BufferSource. */
function signedBytes(prefix: string, payload: WebhookPayload): Uint8Array {
  if (typeof payload === "string") return encoder.encode(`${prefix}${payload}`);
  const head = encoder.encode(prefix);
  const bytes = new Uint8Array(head.length + payload.byteLength);
  bytes.set(head);
  bytes.set(payload, head.length);
  return bytes;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

async function hmacHex(secret: string, data: Uint8Array): Promise<string> {
  // The hot path: a key imported before costs no await.
  let key = hmacKey(secret);
  if (key instanceof Promise) key = await key;
  const mac = new Uint8Array(await subtle().sign("HMAC", key, data));
  let hex = "";
  for (const b of mac) hex += HEX[b];
  return hex;
}

async function anyVerifies(
  publicKeys: readonly string[],
  data: Uint8Array,
  signatures: readonly Uint8Array[],
): Promise<boolean> {
  const checks: Promise<boolean>[] = [];
  for (const key of publicKeys) {
    const imported = await resolved(publicKey(key));
    for (const s of signatures) checks.push(subtle().verify("Ed25519", imported, s, data));
  }
  return (await Promise.all(checks)).includes(true);
}

const webCrypto: CryptoProvider<"async"> = {
  computeSignatures(secrets, timestampText, payload) {
    const data = signedBytes(`${timestampText}.`, payload);
    // One secret is the common case; no Promise.all around it.
    if (secrets.length === 1) return hmacHex(secrets[0] as string, data).then((hex) => [hex]);
    return Promise.all(secrets.map((s) => hmacHex(s, data)));
  },
  hmacBase64(secrets, prefix, payload) {
    const data = signedBytes(prefix, payload);
    return Promise.all(
      secrets.map(async (s) =>
        encodeBase64(new Uint8Array(await subtle().sign("HMAC", await resolved(standardHmacKey(s)), data))),
      ),
    );
  },
  signEd25519(secretKeys, prefix, payload) {
    const data = signedBytes(prefix, payload);
    return Promise.all(
      secretKeys.map(async (key) =>
        encodeBase64(new Uint8Array(await subtle().sign("Ed25519", await resolved(privateKey(key)), data))),
      ),
    );
  },
  verifyEd25519(publicKeys, prefix, payload, signatures) {
    return anyVerifies(publicKeys, signedBytes(prefix, payload), signatures);
  },
};

/**
 * `verifySignature` on WebCrypto (`globalThis.crypto.subtle`), for runtimes without
 * `node:crypto`. Same arguments, same checks, same error codes.
 *
 * @param payload The raw request body (string, Buffer or Uint8Array).
 * @param header The `Service-Signature` header value.
 * @param secret The endpoint secret or `whpk_…` public key, or several during a rotation (any
 *   match passes).
 * @param options Tolerance and clock, see {@link VerifyOptions}.
 * @returns The verified timestamp, in Unix seconds.
 * @throws {WebhookVerificationError} (the promise rejects) on every failure.
 */
export async function verifySignatureAsync(
  payload: WebhookPayload,
  header: string | null | undefined,
  secret: WebhookSecret,
  options?: VerifyOptions,
): Promise<number> {
  return verifyHeader(webCrypto, payload, header, secret, options);
}

/**
 * `constructEvent` on WebCrypto: verifies, then parses the body into a typed event.
 *
 * @param payload The raw request body (string, Buffer or Uint8Array).
 * @param header The `Service-Signature` header value.
 * @param secret The endpoint secret, or several during a rotation.
 * @param options Tolerance and clock, see {@link VerifyOptions}.
 * @returns The event, a union discriminated by `type`.
 * @throws {WebhookVerificationError} as {@link verifySignatureAsync}, or `invalid_payload`.
 */
export async function constructEventAsync(
  payload: WebhookPayload,
  header: string | null | undefined,
  secret: WebhookSecret,
  options?: VerifyOptions,
): Promise<DesklineEvent> {
  await verifySignatureAsync(payload, header, secret, options);
  return parseEvent(payload);
}

/**
 * `signPayload` on WebCrypto.
 *
 * @param payload The exact body that will be sent.
 * @param secret The secret (`v1`) or `whsk_…` key (`v1a`) to sign with; with several, one
 *   signature per key.
 * @param options `timestamp` to sign with (default: now).
 * @returns `t=<unix>,v1=<hex>[,v1=<hex>…]`.
 */
export async function signPayloadAsync(
  payload: WebhookPayload,
  secret: WebhookSecret,
  options?: SignOptions,
): Promise<string> {
  return signHeader(webCrypto, payload, secret, options);
}

/**
 * `verifyStandardWebhook` on WebCrypto (Ed25519 in `crypto.subtle`): the Standard Webhooks
 * headers, `v1` with `whsec_…` secrets and `v1a` with `whpk_…` public keys. Same checks, same
 * error codes.
 *
 * @param payload The raw request body, unchanged.
 * @param headers The request's `Headers`, or a plain object with the three lower-case names.
 * @param secret The `whpk_…` public key or `whsec_…` secret, or several during a rotation.
 * @param options Tolerance and clock, see {@link VerifyOptions}.
 * @returns The verified `webhook-timestamp`, in Unix seconds.
 * @throws {WebhookVerificationError} (the promise rejects) on every failure.
 */
export async function verifyStandardWebhookAsync(
  payload: WebhookPayload,
  headers: StandardWebhookHeaderSource,
  secret: WebhookSecret,
  options?: VerifyOptions,
): Promise<number> {
  return verifyStandard(webCrypto, payload, headers, secret, options);
}
