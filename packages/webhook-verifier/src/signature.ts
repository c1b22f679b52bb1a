// The signature algorithm (docs/design.md, Verifier; and its signing side), written once over a CryptoProvider: the
// node:crypto entry and the WebCrypto entry differ only in the provider they hand in (as
// stripe-node's Webhooks does). No node imports: `/web` and `/fetch` are built from it.
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
import { type SignOptions, signTimestamp } from "./sign-options.js";

/**
 * Computes `v1` signatures: lowercase hex HMAC-SHA256 keyed with each secret in turn, over
 * `<timestampText>.<payload>` with the payload's bytes unchanged. One result per secret, in order.
 * `Result` is `string[]` for a synchronous provider, `Promise<string[]>` for an asynchronous one.
 */
export interface CryptoProvider<Result extends string[] | Promise<string[]>> {
  computeSignatures(secrets: readonly string[], timestampText: string, payload: WebhookPayload): Result;
}

type SyncProvider = CryptoProvider<string[]>;
type AsyncProvider = CryptoProvider<Promise<string[]>>;

/** Continues with the provider's signatures, now when it had them at once, later when it did not. */
function withSignatures<R>(computed: string[] | Promise<string[]>, next: (signatures: string[]) => R) {
  return Array.isArray(computed) ? next(computed) : computed.then(next);
}

/**
 * Equal hex strings, compared in time that depends only on their length (always 64 here): the
 * header's `v1` values are lower-cased by the parser, the computed ones are lowercase.
 */
function equalHex(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * Checks a `Service-Signature` header: inputs, header grammar, then any `v1` against any secret,
 * then the timestamp tolerance. Throws a WebhookVerificationError, or returns the verified `t`.
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
  const secrets = secretList(secret);
  checkPayload(payload);
  const parsed = parseSignatureHeader(header);
  return withSignatures(provider.computeSignatures(secrets, parsed.timestampText, payload), (expected) => {
    let matched = false;
    // Every pair is compared, without stopping at a match: the time taken says nothing about
    // which secret or which `v1` matched.
    for (const e of expected) for (const given of parsed.signatures) if (equalHex(e, given)) matched = true;
    if (!matched) throw mismatch();
    // Checked after the signature, as Stripe does: a stale but authentic delivery then says so,
    // while a forged one only ever learns "mismatch".
    return checkTolerance(parsed.timestamp, options);
  });
}

/** Builds `t=<unix>,v1=<hex>[,v1=<hex>…]`, one `v1` per secret in the order given. */
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
  const secrets = secretList(secret);
  checkPayload(payload);
  const t = String(signTimestamp(options));
  return withSignatures(provider.computeSignatures(secrets, t, payload), (signatures) => {
    let header = `t=${t}`;
    for (const s of signatures) header += `,v1=${s}`;
    return header;
  });
}
