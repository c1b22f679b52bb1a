// The WebCrypto implementation, for runtimes without node:crypto (Deno, Bun, Cloudflare Workers,
// browsers). This module and everything it imports must stay free of node imports: it is the
// `/web` entry and the base of `/fetch`.
import type { VerifyOptions, WebhookPayload, WebhookSecret } from "./core.js";
import { type DesklineEvent, parseEvent } from "./event.js";
import type { SignOptions } from "./sign-options.js";
import { type CryptoProvider, signHeader, verifyHeader } from "./signature.js";

// Structural, so that neither the DOM lib nor @types/node is needed to type-check or consume this.
interface HmacSubtle {
  importKey(
    format: "raw",
    keyData: Uint8Array,
    algorithm: { name: "HMAC"; hash: "SHA-256" },
    extractable: false,
    usages: ["sign"],
  ): Promise<unknown>;
  sign(algorithm: "HMAC", key: unknown, data: Uint8Array): Promise<ArrayBuffer>;
}

const encoder = new TextEncoder();

function subtle(): HmacSubtle {
  const s = (globalThis as { crypto?: { subtle?: HmacSubtle } }).crypto?.subtle;
  if (!s) throw new Error("globalThis.crypto.subtle is not available in this runtime");
  return s;
}

// importKey costs about as much as signing a small body, and a receiver uses the same one or two
// secrets for every delivery, so imported keys are kept (the resolved ones apart, so that the hot
// path awaits nothing but the signature). Bounded in case secrets are per tenant.
const MAX_CACHED_KEYS = 64;
const pending = new Map<string, Promise<unknown>>();
const ready = new Map<string, unknown>();

function hmacKey(secret: string): unknown {
  const key = ready.get(secret);
  if (key !== undefined) return key;
  let promise = pending.get(secret);
  if (promise === undefined) {
    if (pending.size >= MAX_CACHED_KEYS) {
      pending.clear();
      ready.clear();
    }
    promise = subtle()
      .importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"])
      .then(
        (imported) => {
          if (pending.get(secret) === promise) ready.set(secret, imported);
          return imported;
        },
        (error: unknown) => {
          // A failed import must not be remembered.
          pending.delete(secret);
          throw error;
        },
      );
    pending.set(secret, promise);
  }
  return promise;
}

/** `<t>.<body>` as one buffer, since WebCrypto signs a single BufferSource. */
function signedBytes(timestampText: string, payload: WebhookPayload): Uint8Array {
  if (typeof payload === "string") return encoder.encode(`${timestampText}.${payload}`);
  const bytes = new Uint8Array(timestampText.length + 1 + payload.byteLength);
  encoder.encodeInto(`${timestampText}.`, bytes);
  bytes.set(payload, timestampText.length + 1);
  return bytes;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

async function hmacHex(secret: string, data: Uint8Array): Promise<string> {
  let key = hmacKey(secret);
  if (key instanceof Promise) key = await key;
  const mac = new Uint8Array(await subtle().sign("HMAC", key, data));
  let hex = "";
  for (const b of mac) hex += HEX[b];
  return hex;
}

const webCrypto: CryptoProvider<Promise<string[]>> = {
  computeSignatures(secrets, timestampText, payload) {
    const data = signedBytes(timestampText, payload);
    // One secret is the common case; no Promise.all around it.
    if (secrets.length === 1) return hmacHex(secrets[0] as string, data).then((hex) => [hex]);
    return Promise.all(secrets.map((s) => hmacHex(s, data)));
  },
};

/**
 * `verifySignature` on WebCrypto (`globalThis.crypto.subtle`), for runtimes without
 * `node:crypto`. Same arguments, same checks, same error codes.
 *
 * @param payload The raw request body (string, Buffer or Uint8Array).
 * @param header The `Service-Signature` header value.
 * @param secret The endpoint secret, or several during a rotation (any match passes).
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
 * @param secret The secret to sign with; with several, one `v1` per secret.
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
