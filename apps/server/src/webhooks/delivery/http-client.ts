import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from "node:dns";
import { readFileSync } from "node:fs";
import { isIP, type LookupFunction, type Socket } from "node:net";
import * as tls from "node:tls";
import { Agent, buildConnector, type Dispatcher, request } from "undici";
import { bypassesProxy, type EgressProxy, type NoProxyRule } from "../egress-proxy.js";
import { refusedRange } from "../endpoints/address-policy.js";
import { readAnswerStart, receiverAnswer } from "./answer.js";
import type { AttemptResult } from "./outcome.js";
import { openTunnel, ProxyConnectError } from "./proxy-tunnel.js";

/**
 * The outgoing HTTP of webhook deliveries, on undici: one keep-alive Agent per process whose
 * pools never make an attempt wait for a socket (no cap per origin: an idle socket is reused, else
 * one is opened), so endpoints that share a host never wait for each other's sockets and an
 * attempt's timeout measures the attempt, not a queue; each endpoint's budget is its lane's
 * WEBHOOK_ENDPOINT_CONCURRENCY (docs/decisions.md, "One schedule: the delivery records"). Its
 * connector refuses private addresses (the SSRF guard) on the address it actually connects to,
 * after DNS resolution, so neither a DNS name pointing inside nor a rebinding between check and
 * connect gets through. With an egress proxy (WEBHOOK_PROXY_URL) the same check decides the
 * address, and the proxy is asked to tunnel to that address (proxy-tunnel.ts). Redirects are
 * never followed (undici's `request` does not follow them).
 * TLS trusts the system store plus NODE_EXTRA_CA_CERTS.
 */

/** The connector would not connect: the address is in a refused range. */
export class AddressRefusedError extends Error {
  readonly code = "ERR_WEBHOOK_ADDRESS_REFUSED";
}

// Where Linux distributions and macOS keep the system's CA bundle (OpenSSL's default file).
const SYSTEM_CA_FILES = [
  "/etc/ssl/certs/ca-certificates.crt",
  "/etc/pki/tls/certs/ca-bundle.crt",
  "/etc/ssl/ca-bundle.pem",
  "/etc/ssl/cert.pem",
];

function readable(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/**
 * The CA certificates deliveries trust: Node's bundled roots, the system store and the file
 * NODE_EXTRA_CA_CERTS names. (Passing `ca` replaces Node's defaults, so all three are listed.)
 */
export function trustedCertificates(extraCaFile: string | undefined): string[] {
  const getCA = (tls as { getCACertificates?: (kind: string) => string[] }).getCACertificates;
  if (getCA) return distinct([...getCA("default"), ...getCA("system")]); // Node >= 22.15: "default" has the extras
  const system = SYSTEM_CA_FILES.map(readable).find((pem) => pem !== undefined);
  const extra = extraCaFile ? readable(extraCaFile) : undefined;
  return distinct([...tls.rootCertificates, ...(system ? [system] : []), ...(extra ? [extra] : [])]);
}

const CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * Each certificate once. The system store mostly repeats Node's roots (and NODE_EXTRA_CA_CERTS
 * often names the system store itself): 432 certificates where 166 differ, on Debian. A secure
 * context parses every one it is given, and each worker builds one: 117 ms of CPU, 35–53 ms with
 * each once. A file holding anything but plain certificates (OpenSSL's TRUSTED CERTIFICATE form,
 * say) is kept whole, as it was read.
 */
function distinct(pems: string[]): string[] {
  const seen = new Set<string>();
  const certificates = pems.flatMap((pem) => {
    const found = pem.match(CERTIFICATE) ?? [];
    return found.length === pem.split("-----BEGIN ").length - 1 ? found : [pem];
  });
  return certificates.filter((certificate) => {
    const key = certificate.replace(/\s+/g, "");
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function refusal(address: string): AddressRefusedError | undefined {
  const range = refusedRange(address);
  return range ? new AddressRefusedError(`${address} is ${range}`) : undefined;
}

/** How host names are resolved: `dns.lookup`'s signature, with `all: true`. */
export type Resolver = (
  hostname: string,
  options: LookupAllOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

const systemResolver: Resolver = (hostname, options, callback) => dnsLookup(hostname, options, callback);

/**
 * A lookup keeping only the addresses deliveries may reach (all of them, unless `guard`), in
 * both of Node's calling forms.
 */
function guardedLookup(resolve: Resolver, guard = true): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, "", 0);
      const allowed = guard ? addresses.filter((a) => refusedRange(a.address) === null) : addresses;
      const first = allowed[0];
      if (!first) {
        const refused = addresses[0] ? refusal(addresses[0].address) : undefined;
        const reason = refused ? `${hostname} resolves to ${refused.message}` : `${hostname} has no address`;
        return callback(new AddressRefusedError(reason), "", 0);
      }
      if ((options as { all?: boolean }).all) {
        (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, allowed);
      } else callback(null, first.address, first.family);
    });
  };
}

/** WEBHOOK_PROXY_URL and WEBHOOK_NO_PROXY, as settings.ts reads them. */
export interface Egress {
  proxy: EgressProxy;
  noProxy: readonly NoProxyRule[];
}

export interface DeliveryAgentOptions {
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: skip the guard (dev and tests on loopback). */
  allowPrivateNetworks: boolean;
  /** The CA certificates to trust (default: trustedCertificates of NODE_EXTRA_CA_CERTS). */
  ca: string[];
  /** Connections kept per origin; null (deliveries) for no cap, so no attempt queues for one. */
  connections: number | null;
  /** Resolves host names (default `dns.lookup`); tests map names to addresses with their own. */
  resolve?: Resolver;
  /**
   * Told of each refused connection, with the host and what it resolved to: for the operator's
   * log only. The attempts log, which the customer reads, says `address_refused` and no address
   * (outcome.ts), so it is no probe of the operator's network.
   */
  onRefused?: (refusal: { host: string; reason: string }) => void;
  /** The egress proxy every connection goes through, but to the hosts WEBHOOK_NO_PROXY exempts. */
  egress?: Egress | undefined;
}

/** The undici Agent deliveries go through. */
export function createDeliveryAgent({
  allowPrivateNetworks,
  ca,
  connections,
  resolve = systemResolver,
  onRefused,
  egress,
}: DeliveryAgentOptions): Agent {
  // One secure context for every connection: given `ca` alone, each TLS connect would parse the
  // whole CA list again (~150 roots; it was a tenth of a busy worker's CPU in the delivery bench).
  const secureContext = tls.createSecureContext({ ca });
  const base = buildConnector({
    secureContext,
    ...(allowPrivateNetworks ? {} : { lookup: guardedLookup(resolve) }),
  });
  const direct = directConnector(base, allowPrivateNetworks);
  const tunnelled =
    egress &&
    tunnelConnector(base, egress.proxy, guardedLookup(resolve, !allowPrivateNetworks), secureContext);
  const connect: buildConnector.connector = (options, reply) => {
    const callback: typeof reply = (error, socket) => {
      const refused = error && causeChain(error).find((e) => e instanceof AddressRefusedError);
      if (refused) onRefused?.({ host: options.hostname, reason: refused.message ?? "" });
      (reply as (error: Error | null, socket: Socket | null) => void)(error, socket as Socket | null);
    };
    if (!allowPrivateNetworks) {
      const host = options.hostname.replace(/^\[|\]$/g, "");
      // An IP literal is connected to without a lookup, so it is checked here.
      const refused = isIP(host) ? refusal(host) : undefined;
      if (refused) return callback(refused, null);
    }
    const proxied = tunnelled && egress && !bypassesProxy(egress.noProxy, options.hostname);
    return (proxied ? tunnelled : direct)(options, callback);
  };
  return new Agent({ connect, connections, keepAliveTimeout: 30_000 });
}

/**
 * A direct connection: undici's connector (its lookup the guarded one), then the last word, the
 * address the socket is connected to.
 */
function directConnector(
  base: buildConnector.connector,
  allowPrivateNetworks: boolean,
): buildConnector.connector {
  return (options, callback) =>
    base(options, (error, socket) => {
      if (error || !socket) return callback(error as Error, null);
      const remote = (socket as Socket).remoteAddress;
      const refused = allowPrivateNetworks || !remote ? undefined : refusal(remote);
      if (refused) {
        socket.destroy();
        return callback(refused, null);
      }
      callback(null, socket);
    });
}

/**
 * Through the egress proxy (proxy-tunnel.ts): the host is resolved here by `lookup` (the guarded
 * one unless private networks are allowed), and the proxy is asked to CONNECT to that checked
 * address, never to the name, which it would resolve itself. TLS to the receiver then runs
 * inside the tunnel through undici's own connector (its `httpSocket`), so the SNI and the
 * certificate check are the host name's, as are the `Host` header and the TLS session cache.
 */
function tunnelConnector(
  base: buildConnector.connector,
  proxy: EgressProxy,
  lookup: LookupFunction,
  secureContext: tls.SecureContext,
): buildConnector.connector {
  return (options, callback) => {
    const host = options.hostname.replace(/^\[|\]$/g, "");
    const port = Number(options.port) || (options.protocol === "https:" ? 443 : 80);
    const address = isIP(host)
      ? Promise.resolve(host)
      : new Promise<string>((done, fail) =>
          // One address is tunnelled to (no happy eyeballs through a proxy): IPv4 first, which
          // every proxy can reach.
          lookup(host, { order: "ipv4first" }, (error, found) =>
            error ? fail(error) : done(found as string),
          ),
        );
    address
      .then((checked) => openTunnel(proxy, { address: checked, port }, secureContext))
      .then(
        (tunnel) => {
          if (options.protocol !== "https:") return callback(null, tunnel);
          base({ ...options, httpSocket: tunnel }, (error, socket) => {
            if (error) tunnel.destroy();
            (callback as (error: Error | null, socket: Socket | null) => void)(
              error,
              socket as Socket | null,
            );
          });
        },
        (error: Error) => callback(error, null),
      );
  };
}

function causeChain(error: unknown): Array<{ code?: string; message?: string; name?: string }> {
  const chain = [];
  let current = error as { code?: string; message?: string; cause?: unknown } | undefined;
  for (let i = 0; current && i < 5; i++) {
    chain.push(current);
    current = current.cause as typeof current;
  }
  return chain;
}

/**
 * An abort signal that fires `timeoutMs` from now, but only after the event loop has read what
 * arrived meanwhile. A process paused (a long GC, a frozen VM, SIGSTOP) past the timeout runs its
 * overdue timers before it reads its sockets; an answer that came during the pause is in the
 * socket, and would be lost to the timer. Deferred by a `setImmediate`, the abort runs after the
 * loop's next read of the sockets, so an answer that arrived is taken as what it was.
 */
function timeoutAfterReads(timeoutMs: number): { signal: AbortSignal; clear: () => void } {
  const controller = new AbortController();
  let immediate: NodeJS.Immediate | undefined;
  const timer = setTimeout(() => {
    immediate = setImmediate(() => controller.abort(new DOMException("timeout", "TimeoutError")));
  }, timeoutMs);
  return {
    signal: controller.signal,
    clear: () => {
      clearTimeout(timer);
      if (immediate) clearImmediate(immediate);
    },
  };
}

/**
 * POSTs `body` to `url` and says how it went. The whole attempt (connect, TLS, request, answer
 * headers) must finish within `timeoutMs`; the start of the answer's body is read within it too.
 */
export async function postWebhook(
  dispatcher: Dispatcher,
  url: string,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<AttemptResult> {
  const { signal, clear } = timeoutAfterReads(timeoutMs);
  try {
    const response = await request(url, {
      method: "POST",
      body,
      headers,
      dispatcher,
      signal,
      // Off: undici's own timers would fire before the sockets are read, as a plain timer would.
      // The signal bounds the attempt, the body's reading included.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
    // The answer is in: the start of its body is kept (answer.ts), read within the same timeout;
    // a longer body is not read on, its connection closed instead of drained.
    const start = await readAnswerStart(response.body, signal);
    clear();
    const retryAfterMs = retryAfter(response.statusCode, response.headers["retry-after"]);
    return {
      kind: "response",
      statusCode: response.statusCode,
      answer: receiverAnswer(response.headers, start),
      ...(retryAfterMs !== null && { retryAfterMs }),
    };
  } catch (error) {
    clear();
    if (signal.aborted) return { kind: "timeout", timeoutMs };
    const chain = causeChain(error);
    const refused = chain.find((e) => e instanceof AddressRefusedError);
    if (refused) return { kind: "address_refused", reason: refused.message ?? "" };
    // The proxy's refusal (a 407, a 403) or absence, in its own words rather than a socket's code.
    const proxy = chain.find((e) => e instanceof ProxyConnectError);
    if (proxy) return { kind: "network_error", code: undefined, message: proxy.message ?? "" };
    const coded = chain.find((e) => e.code && e.code !== "UND_ERR") ?? chain[0];
    if (coded?.code === "UND_ERR_HEADERS_TIMEOUT") return { kind: "timeout", timeoutMs };
    return { kind: "network_error", code: coded?.code, message: coded?.message ?? String(error) };
  }
}

/**
 * The wait a 429 or 503 answer asks for in `Retry-After` (seconds, or an HTTP date), in ms; null
 * for other answers and for a header that says nothing usable.
 */
export function retryAfter(
  statusCode: number,
  header: string | string[] | undefined,
  now = Date.now(),
): number | null {
  if ((statusCode !== 429 && statusCode !== 503) || typeof header !== "string") return null;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}
