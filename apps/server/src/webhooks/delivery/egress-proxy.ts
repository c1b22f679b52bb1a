import { request as httpRequest } from "node:http";
import { isIP, connect as netConnect, type Socket } from "node:net";
import { type SecureContext, connect as tlsConnect } from "node:tls";

/**
 * The egress proxy (WEBHOOK_PROXY_URL, WEBHOOK_NO_PROXY; docs/operations.md "Fixed egress
 * addresses"): what the two variables say, and the HTTP CONNECT tunnel a delivery's connection
 * is opened through. The tunnel goes to an address the delivery agent has already resolved and
 * checked against the address policy (http-client.ts), never to a host name the proxy would
 * resolve: so the proxy is no way around the SSRF guard (docs/decisions.md, "Deliveries through
 * an egress proxy").
 */

/** A forward proxy deliveries go through; its credentials are never in what it prints. */
export class EgressProxy {
  readonly protocol: "http:" | "https:";
  readonly hostname: string;
  readonly port: number;
  /** `Proxy-Authorization` for the URL's user and password; non-enumerable, so no log shows it. */
  declare readonly authorization: string | undefined;

  constructor(url: URL) {
    this.protocol = url.protocol as "http:" | "https:";
    this.hostname = url.hostname.replace(/^\[|\]$/g, "");
    this.port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
    const user = decodeURIComponent(url.username);
    const authorization = url.username
      ? `Basic ${Buffer.from(`${user}:${decodeURIComponent(url.password)}`).toString("base64")}`
      : undefined;
    Object.defineProperty(this, "authorization", { value: authorization, enumerable: false });
  }

  /** The proxy's URL as logs show it: the password replaced by `***`. */
  toString(): string {
    return redactedProxyUrl(this);
  }

  toJSON(): string {
    return this.toString();
  }
}

function redactedProxyUrl(proxy: EgressProxy): string {
  const host = proxy.hostname.includes(":") ? `[${proxy.hostname}]` : proxy.hostname;
  return `${proxy.protocol}//${proxy.authorization ? "***@" : ""}${host}:${proxy.port}`;
}

/** A URL as an error message may quote it: without its user and password. */
function withoutCredentials(text: string): string {
  return text.replace(/\/\/[^/@]*@/, "//***@");
}

/**
 * WEBHOOK_PROXY_URL: `http://[user:password@]host[:port]` or `https://…` (TLS to the proxy
 * itself, then CONNECT inside it); the port defaults to the scheme's (80, 443).
 * @throws {Error} saying what is wrong, without quoting the password.
 */
export function parseProxyUrl(text: string): EgressProxy {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`${JSON.stringify(withoutCredentials(text))} is not a URL`);
  }
  const shown = JSON.stringify(withoutCredentials(url.href));
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new Error(`must be an http:// or https:// URL of a proxy, got ${shown}`);
  }
  if ((url.pathname !== "/" && url.pathname !== "") || url.search || url.hash) {
    throw new Error(`must be the proxy's scheme, host and port only (no path or query), got ${shown}`);
  }
  if (url.password && !url.username) throw new Error(`has a password but no user name: ${shown}`);
  return new EgressProxy(url);
}

/** One WEBHOOK_NO_PROXY entry: every host, one host (or IP address), or a domain and its names. */
export type NoProxyRule = { all: true } | { host: string } | { domain: string };

const HOST_NAME =
  /^(?=.{1,253}$)([a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9])?)(\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9])?)*$/;

/** A host as rules and connections compare it: lower case, no brackets, no final dot, IPv6 canonical. */
function comparable(host: string): string {
  const bare = host
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "");
  return isIP(bare) === 6 ? new URL(`http://[${bare}]/`).hostname.slice(1, -1) : bare;
}

function noProxyRule(entry: string): NoProxyRule {
  if (entry === "*") return { all: true };
  const host = comparable(entry);
  if (isIP(host)) return { host };
  if (host.startsWith("*."))
    throw new Error(`${JSON.stringify(entry)}: write ${entry.slice(1)} for a domain`);
  const domain = host.startsWith(".") ? host.slice(1) : undefined;
  if (!HOST_NAME.test(domain ?? host)) {
    throw new Error(
      `${JSON.stringify(entry)} is not a host name, an IP address, a .domain or *: hosts only, without scheme, port or path`,
    );
  }
  return domain ? { domain } : { host };
}

/**
 * WEBHOOK_NO_PROXY: comma-separated `*` (every host), `.example.com` (example.com and every name
 * under it), or one host name or IP address (that host alone). Blank entries are skipped.
 * @throws {Error} naming the entry that is wrong.
 */
export function parseNoProxy(text: string): NoProxyRule[] {
  return text
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "")
    .map(noProxyRule);
}

/** Whether a delivery to `hostname` connects directly, by WEBHOOK_NO_PROXY. */
export function bypassesProxy(rules: readonly NoProxyRule[], hostname: string): boolean {
  const host = comparable(hostname);
  return rules.some((rule) => {
    if ("all" in rule) return true;
    if ("host" in rule) return rule.host === host;
    return host === rule.domain || host.endsWith(`.${rule.domain}`);
  });
}

/** The proxy would not open the tunnel, or could not be reached; the message says which, plainly. */
export class ProxyConnectError extends Error {
  readonly code = "ERR_WEBHOOK_PROXY";
}

/** How long the proxy has to answer a CONNECT: undici's own connect timeout. */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * The connection to the proxy itself: TLS for an https:// proxy, checked against the same CAs as
 * receivers; node:http speaks CONNECT over it.
 */
function connectionTo(proxy: EgressProxy, secureContext: SecureContext): Socket {
  if (proxy.protocol === "http:") return netConnect({ host: proxy.hostname, port: proxy.port });
  return tlsConnect({
    host: proxy.hostname,
    port: proxy.port,
    secureContext,
    ...(isIP(proxy.hostname) ? {} : { servername: proxy.hostname }),
  });
}

/**
 * A socket tunnelled by `proxy` to `address`:`port` (an IP address the caller checked), by HTTP
 * CONNECT. `secureContext` is trusted for an https:// proxy's own certificate.
 */
export function openTunnel(
  proxy: EgressProxy,
  target: { address: string; port: number },
  secureContext: SecureContext,
): Promise<Socket> {
  const authority = `${target.address.includes(":") ? `[${target.address}]` : target.address}:${target.port}`;
  const req = httpRequest({
    method: "CONNECT",
    path: authority,
    createConnection: () => connectionTo(proxy, secureContext),
    timeout: CONNECT_TIMEOUT_MS,
    headers: {
      host: authority,
      ...(proxy.authorization ? { "proxy-authorization": proxy.authorization } : {}),
    },
  });
  return new Promise((resolve, reject) => {
    // Node hands every answer to a CONNECT to this event, a refusal too.
    req.once("connect", (response, socket, head) => {
      socket.setTimeout(0);
      if (response.statusCode !== 200) {
        socket.destroy();
        const status = `${response.statusCode} ${response.statusMessage ?? ""}`.trim();
        return reject(new ProxyConnectError(`proxy refused CONNECT: ${status}`));
      }
      // Nothing comes before the client speaks, but bytes read past the answer are the tunnel's.
      if (head.length) socket.unshift(head);
      // node:http has let go of the socket: an error on it (the tunnel cut under TLS) must not
      // go unheard and end the process; the connection on top fails and says so.
      socket.on("error", () => socket.destroy());
      resolve(socket);
    });
    req.once("timeout", () =>
      req.destroy(
        new ProxyConnectError(`proxy did not answer CONNECT within ${CONNECT_TIMEOUT_MS / 1000} s`),
      ),
    );
    req.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        error instanceof ProxyConnectError
          ? error
          : new ProxyConnectError(`proxy unreachable: ${error.code ?? error.message}`, { cause: error }),
      ),
    );
    req.end();
  });
}
