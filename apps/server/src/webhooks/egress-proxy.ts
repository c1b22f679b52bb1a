import { isIP } from "node:net";

/**
 * The egress proxy's settings (WEBHOOK_PROXY_URL, WEBHOOK_NO_PROXY; docs/operations.md "Fixed
 * egress addresses"): what the two variables say, read by the settings (settings.ts) and used by
 * delivery's tunnel (delivery/proxy-tunnel.ts). Apart from both, so that the settings, which
 * delivery reads, import nothing of delivery.
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
