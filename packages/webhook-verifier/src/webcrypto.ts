// The WebCrypto implementation, for runtimes without node:crypto (Deno, Bun, Cloudflare Workers,
// browsers). This module and everything it imports must stay free of node imports: it is the
// `/web` entry and the base of `/fetch`.
import {
  checkPayload,
  checkTolerance,
  mismatch,
  parseSignatureHeader,
  secretList,
  type VerifyOptions,
  type WebhookPayload,
  type WebhookSecret,
} from "./core.js";
import { type DesklineEvent, parseEvent } from "./event.js";
import { type SignOptions, signTimestamp } from "./sign-options.js";

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

async function hmac(secret: string, data: Uint8Array): Promise<Uint8Array> {
  let key = hmacKey(secret);
  if (key instanceof Promise) key = await key;
  return new Uint8Array(await subtle().sign("HMAC", key, data));
}

function hexToBytes(hex: string): Uint8Array {
  // Only called on strings already checked to be 64 hex digits.
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

function bytesToHex(bytes: Uint8Array): string {
  let hex = "";
  for (const b of bytes) hex += HEX[b];
  return hex;
}

/** Constant-time for equal lengths; lengths are public (always 32 here). */
function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

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
  const secrets = secretList(secret);
  checkPayload(payload);
  const parsed = parseSignatureHeader(header);
  const candidates = parsed.signatures.map(hexToBytes);
  const data = signedBytes(parsed.timestampText, payload);
  let matched = false;
  for (const s of secrets) {
    const expected = await hmac(s, data);
    for (const candidate of candidates) {
      if (equalBytes(expected, candidate)) matched = true;
    }
    if (matched) break;
  }
  if (!matched) throw mismatch();
  return checkTolerance(parsed.timestamp, options);
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
  const secrets = secretList(secret);
  checkPayload(payload);
  const t = String(signTimestamp(options));
  const data = signedBytes(t, payload);
  let header = `t=${t}`;
  for (const s of secrets) header += `,v1=${bytesToHex(await hmac(s, data))}`;
  return header;
}
