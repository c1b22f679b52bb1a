// The signature algorithm (docs/design.md, Verifier; and its signing side), written once over a CryptoProvider: the
// node:crypto entry and the WebCrypto entry differ only in the provider they hand in (as
// stripe-node's Webhooks does). No node imports: `/web` and `/fetch` are built from it.
import {
  checkPayload,
  checkTolerance,
  mismatch,
  parseSignatureHeader,
  signedIdOf,
  type VerifyOptions,
  type WebhookPayload,
  type WebhookSecret,
} from "./core.js";
import { sortKeys } from "./keys.js";
import { type SignOptions, signTimestamp } from "./sign-options.js";

/** A provider's result: at once for node:crypto, a promise for WebCrypto. */
export type Out<T, Mode extends "sync" | "async"> = Mode extends "sync" ? T : Promise<T>;

/**
 * The cryptography, and nothing else. Every method signs or checks `<prefix><payload>`, the
 * payload's bytes unchanged, once per key, results in the order of the keys.
 */
export interface CryptoProvider<Mode extends "sync" | "async"> {
  /** `v1` of Service-Signature: lowercase hex HMAC-SHA256 over `<timestampText>.<payload>`. */
  computeSignatures(
    secrets: readonly string[],
    timestampText: string,
    payload: WebhookPayload,
  ): Out<string[], Mode>;
  /** `v1` of Standard Webhooks: base64 HMAC-SHA256 keyed with the base64-decoded `whsec_` secret. */
  hmacBase64(secrets: readonly string[], prefix: string, payload: WebhookPayload): Out<string[], Mode>;
  /** `v1a`: base64 Ed25519 signatures with `whsk_` keys. */
  signEd25519(secretKeys: readonly string[], prefix: string, payload: WebhookPayload): Out<string[], Mode>;
  /** Whether any of the 64-byte `signatures` verifies with any of the `whpk_` keys. */
  verifyEd25519(
    publicKeys: readonly string[],
    prefix: string,
    payload: WebhookPayload,
    signatures: readonly Uint8Array[],
  ): Out<boolean, Mode>;
}

type SyncProvider = CryptoProvider<"sync">;
type AsyncProvider = CryptoProvider<"async">;

/** Continues with a provider's result, now when it had it at once, later when it did not. */
export function andThen<T, R>(computed: T | Promise<T>, next: (value: T) => R): R | Promise<R> {
  return computed instanceof Promise ? computed.then(next) : next(computed);
}

/** Continues with two of a provider's results, both at once or both awaited. */
export function thenBoth<A, B, R>(
  a: A | Promise<A>,
  b: B | Promise<B>,
  next: (a: A, b: B) => R,
): R | Promise<R> {
  if (a instanceof Promise || b instanceof Promise) return Promise.all([a, b]).then(([x, y]) => next(x, y));
  return next(a, b);
}

/**
 * Equal strings, compared in time that depends only on their length (always 64 hex digits or 44
 * base64 characters here): the header's `v1` values are lower-cased by the parser, the computed
 * ones are lowercase.
 */
export function equalText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** Whether any computed HMAC equals any given one; every pair compared, without stopping at a match. */
export function anyEqual(expected: readonly string[], given: readonly string[]): boolean {
  let matched = false;
  // The time taken says nothing about which secret or which signature matched.
  for (const e of expected) for (const g of given) if (equalText(e, g)) matched = true;
  return matched;
}

/**
 * Checks a `Service-Signature` header: inputs, header grammar, then any `v1` against any HMAC
 * secret and any `v1a` against any public key, then the timestamp tolerance. Throws a
 * WebhookVerificationError, or returns the verified `t`.
 */
export function verifyHeader(
  provider: SyncProvider,
  payload: WebhookPayload,
  header: string | null | undefined,
  secret: WebhookSecret,
  options: VerifyOptions | undefined,
): number;
export function verifyHeader(
  provider: AsyncProvider,
  payload: WebhookPayload,
  header: string | null | undefined,
  secret: WebhookSecret,
  options: VerifyOptions | undefined,
): Promise<number>;
export function verifyHeader(
  provider: SyncProvider | AsyncProvider,
  payload: WebhookPayload,
  header: string | null | undefined,
  secret: WebhookSecret,
  options: VerifyOptions | undefined,
): number | Promise<number> {
  const keys = sortKeys(secret, "verify");
  checkPayload(payload);
  const parsed = parseSignatureHeader(header);
  const t = parsed.timestampText;
  const hmacs =
    keys.hmac.length > 0 && parsed.signatures.length > 0
      ? provider.computeSignatures(keys.hmac, t, payload)
      : [];
  // `v1a` signs the Standard Webhooks string, `<id>.<t>.<payload>`: the same signature as the
  // delivery's `webhook-signature` carries (docs/decisions.md, "Public-key signatures").
  const id =
    keys.publicKeys.length > 0 && parsed.asymmetric.length > 0 ? signedIdOf(payload, options?.id) : undefined;
  const verified =
    id !== undefined
      ? provider.verifyEd25519(keys.publicKeys, `${id}.${t}.`, payload, parsed.asymmetric)
      : false;
  return thenBoth(hmacs, verified, (expected, asymmetricOk) => {
    if (!anyEqual(expected, parsed.signatures) && !asymmetricOk) throw mismatch();
    // Checked after the signature, as Stripe does: a stale but authentic delivery then says so,
    // while a forged one only ever learns "mismatch".
    return checkTolerance(parsed.timestamp, options);
  });
}

/**
 * One signature per key, in the order of the keys: `hmac` for each HMAC secret, `ed25519` for
 * each Ed25519 secret key; `render` writes each with its scheme's tag.
 */
export function signEach(
  provider: SyncProvider | AsyncProvider,
  secret: WebhookSecret,
  hmac: (secrets: readonly string[]) => string[] | Promise<string[]>,
  prefix: string | (() => string),
  payload: WebhookPayload,
  render: (signature: string, ed25519: boolean) => string,
): string[] | Promise<string[]> {
  const keys = sortKeys(secret, "sign");
  checkPayload(payload);
  const macs = keys.hmac.length > 0 ? hmac(keys.hmac) : [];
  // The `v1a` prefix is asked for only when there is an Ed25519 key to sign with.
  const edPrefix = () => (typeof prefix === "string" ? prefix : prefix());
  const eds = keys.secretKeys.length > 0 ? provider.signEd25519(keys.secretKeys, edPrefix(), payload) : [];
  return thenBoth(macs, eds, (m, e) => {
    let i = 0;
    let j = 0;
    return keys.ed25519.map((ed) => render(ed ? (e[j++] as string) : (m[i++] as string), ed));
  });
}

/** The id a `v1a` item signs, or a TypeError that says to pass it. */
function v1aIdOf(payload: WebhookPayload, options: SignOptions | undefined): string {
  const id = signedIdOf(payload, options?.id);
  if (id === undefined) {
    throw new TypeError(
      "signing v1a needs the delivery's id: pass options.id, or a payload with a top-level id",
    );
  }
  return id;
}

/**
 * Builds `t=<unix>,v1=<hex>[,v1a=<base64>…]`, one signature per key in the order given: `v1` over
 * `<t>.<payload>`, `v1a` over `<id>.<t>.<payload>`.
 */
export function signHeader(
  provider: SyncProvider,
  payload: WebhookPayload,
  secret: WebhookSecret,
  options: SignOptions | undefined,
): string;
export function signHeader(
  provider: AsyncProvider,
  payload: WebhookPayload,
  secret: WebhookSecret,
  options: SignOptions | undefined,
): Promise<string>;
export function signHeader(
  provider: SyncProvider | AsyncProvider,
  payload: WebhookPayload,
  secret: WebhookSecret,
  options: SignOptions | undefined,
): string | Promise<string> {
  const t = String(signTimestamp(options));
  const signatures = signEach(
    provider,
    secret,
    (secrets) => provider.computeSignatures(secrets, t, payload),
    () => `${v1aIdOf(payload, options)}.${t}.`,
    payload,
    (signature, ed25519) => (ed25519 ? `,v1a=${signature}` : `,v1=${signature}`),
  );
  return andThen(signatures, (items) => `t=${t}${items.join("")}`);
}
