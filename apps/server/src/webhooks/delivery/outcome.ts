import type { ReceiverAnswer } from "./answer.js";

/**
 * What one delivery attempt's result means (docs/design.md, Webhook delivery): success is a 2xx within the timeout;
 * a redirect is not followed and fails; every other answer, a timeout, a refused or broken
 * connection and a refused address fail too. The error text is what developers read in the
 * attempts log, so it says what happened in plain words. Pure: the HTTP code hands it a result.
 */

/** How an attempt ended, as the HTTP client saw it. */
export type AttemptResult =
  /** `retryAfterMs`: the wait a 429 or 503 asked for in `Retry-After`. */
  | { kind: "response"; statusCode: number; answer?: ReceiverAnswer; retryAfterMs?: number }
  | { kind: "timeout"; timeoutMs: number }
  /**
   * The SSRF guard would not connect to the address. `reason` names it and its range, for the
   * operator's log only (http-client.ts `onRefused`): the attempts log does not show it.
   */
  | { kind: "address_refused"; reason: string }
  /** Anything else: DNS failure, connection refused or reset, TLS failure; `code` as Node gives it. */
  | { kind: "network_error"; code: string | undefined; message: string };

export interface AttemptOutcome {
  succeeded: boolean;
  /** The endpoint's HTTP status, or null when it never answered. */
  statusCode: number | null;
  /** Why it failed, or null on success. */
  error: string | null;
  /** What the receiver answered (answer.ts), when it answered. */
  answer?: ReceiverAnswer;
  /** The receiver asked for this long before the next attempt (429 or 503 with `Retry-After`). */
  retryAfterMs?: number;
}

const NETWORK_ERRORS: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host name lookup failed",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  UND_ERR_SOCKET: "connection closed before an answer",
  UND_ERR_CONNECT_TIMEOUT: "connect timeout",
  CERT_HAS_EXPIRED: "TLS certificate expired",
  DEPTH_ZERO_SELF_SIGNED_CERT: "TLS certificate not trusted (self-signed)",
  SELF_SIGNED_CERT_IN_CHAIN: "TLS certificate not trusted (self-signed in chain)",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "TLS certificate not trusted",
  ERR_TLS_CERT_ALTNAME_INVALID: "TLS certificate does not match the host name",
};

/**
 * A refused address in the attempts log: one text whatever the host resolved to, so a customer
 * learns nothing of what names resolve to inside the operator's network (docs/decisions.md
 * "Webhook address policy").
 */
export const ADDRESS_REFUSED =
  "address_refused: the endpoint's host is not a publicly reachable address (loopback, private or another special-purpose range)";

export function classifyAttempt(result: AttemptResult): AttemptOutcome {
  switch (result.kind) {
    case "response": {
      const { statusCode } = result;
      const answer = result.answer && { answer: result.answer };
      if (statusCode >= 200 && statusCode < 300)
        return { succeeded: true, statusCode, error: null, ...answer };
      const error =
        statusCode >= 300 && statusCode < 400
          ? `redirect not followed (HTTP ${statusCode})`
          : `HTTP ${statusCode}`;
      return {
        succeeded: false,
        statusCode,
        error,
        ...answer,
        ...(result.retryAfterMs !== undefined && { retryAfterMs: result.retryAfterMs }),
      };
    }
    case "timeout":
      return { succeeded: false, statusCode: null, error: `timeout after ${result.timeoutMs} ms` };
    case "address_refused":
      return { succeeded: false, statusCode: null, error: ADDRESS_REFUSED };
    case "network_error": {
      const known = result.code ? NETWORK_ERRORS[result.code] : undefined;
      const error = known ?? (result.code ? `${result.code}: ${result.message}` : result.message);
      return { succeeded: false, statusCode: null, error: error.slice(0, 500) };
    }
  }
}
