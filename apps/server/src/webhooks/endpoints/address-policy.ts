import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/**
 * The SSRF guard's rule: which IP addresses a webhook may never reach unless
 * `WEBHOOK_ALLOW_PRIVATE_NETWORKS=true`. The ranges are ipaddr.js's tables of the IANA IPv4 and
 * IPv6 special-purpose registries (a maintained source, not a table of ours); this module only
 * decides which of its named ranges are refused and looks inside the IPv6 forms that carry an IPv4
 * address (docs/decisions.md "Webhook address policy"). Pure: asked about an address the
 * connector is about to connect to (after DNS resolution), or about an endpoint URL's IP literal.
 */

/** ipaddr.js range names a webhook may reach: globally reachable per the IANA registries. */
const REACHABLE_V4 = new Set(["unicast", "as112", "amt"]);
const REACHABLE_V6 = new Set(["unicast", "as112v6", "amt", "orchid2", "droneRemoteIdProtocolEntityTags"]);

/** How a refused ipaddr.js range is named in errors and in the attempts log. */
const LABELS: Record<string, string> = {
  carrierGradeNat: "shared address space (carrier-grade NAT)",
  linkLocal: "link-local",
  uniqueLocal: "unique-local",
  deprecatedSiteLocal: "site-local (deprecated)",
  deprecatedOrchid: "ORCHID (deprecated)",
  discard: "discard-only",
  segmentRouting: "SRv6 SIDs",
  rfc6145: "IPv4-translated",
  rfc6052: "NAT64",
};

const label = (range: string) => LABELS[range] ?? range;

/** 2000::/3: the only IPv6 space allocated for global unicast; everything else is reserved. */
const GLOBAL_UNICAST = ipaddr.parseCIDR("2000::/3");

function ipv4Of(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

function refusedV4(address: ipaddr.IPv4): string | null {
  const range = address.range();
  return REACHABLE_V4.has(range) ? null : label(range);
}

/** An IPv6 form that carries an IPv4 address is refused when that IPv4 address is. */
function refusedEmbedded(form: string, embedded: ipaddr.IPv4[]): string | null {
  for (const v4 of embedded) {
    const refused = refusedV4(v4);
    if (refused) return `${form} of ${v4.toString()} (${refused})`;
  }
  return null;
}

function refusedV6(address: ipaddr.IPv6): string | null {
  const p = address.parts as [number, number, number, number, number, number, number, number];
  const range = address.range();
  switch (range) {
    case "ipv4Mapped":
      // ::ffff:a.b.c.d: the socket goes to the IPv4 address.
      return refusedEmbedded("IPv4-mapped", [address.toIPv4Address()]);
    case "rfc6052":
      // 64:ff9b::/96 is the well-known NAT64 prefix, the IPv4 address in the last 32 bits; the
      // local-use 64:ff9b:1::/48 is not globally reachable at all.
      if (p[2] !== 0) return "NAT64 (local-use)";
      return refusedEmbedded("NAT64", [ipv4Of(p[6], p[7])]);
    case "6to4":
      // 2002:AABB:CCDD::/48 routes to the IPv4 address AA.BB.CC.DD.
      return refusedEmbedded("6to4", [ipv4Of(p[1], p[2])]);
    case "teredo":
      // 2001:0:SSSS:SSSS:flags:port:CCCC:CCCC: the server's IPv4 address, and the client's
      // (bits inverted).
      return refusedEmbedded("Teredo", [ipv4Of(p[2], p[3]), ipv4Of(~p[6] & 0xffff, ~p[7] & 0xffff)]);
  }
  if (range === "unicast") {
    // ::a.b.c.d (IPv4-compatible, deprecated by RFC 4291): no longer routed; never a real receiver.
    if (p.slice(0, 6).every((g) => g === 0)) return "IPv4-compatible (deprecated)";
    if (!address.match(GLOBAL_UNICAST)) return "reserved";
  }
  return REACHABLE_V6.has(range) ? null : label(range);
}

/**
 * The address in WHATWG URL serialisation: all hex groups. ipaddr.js reads `::a.b.c.d` as
 * IPv4-mapped, but a socket connects to it as the IPv4-compatible `::AABB:CCDD`. A zone id
 * (`fe80::1%eth0`) does not change the range.
 */
function canonicalV6(address: string): string {
  const [bare = ""] = address.split("%");
  return new URL(`http://[${bare}]/`).hostname.slice(1, -1);
}

/**
 * Why `address` (an IP address, brackets allowed) is refused, or null when deliveries may connect
 * to it. Anything that is not an IP address is refused.
 */
export function refusedRange(address: string): string | null {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  // node:net decides what is an address (ipaddr.js alone would take "127.1" or "0x7f000001").
  const family = isIP(bare);
  if (family === 4) return refusedV4(ipaddr.IPv4.parse(bare));
  if (family === 6) return refusedV6(ipaddr.IPv6.parse(canonicalV6(bare)));
  return "not an IP address";
}

/**
 * The endpoint URL's host when it is an IP literal in a refused range: why it is refused, or
 * null (a host name, checked when each attempt connects, or a reachable address). The URL has
 * been validated as `https:` already; WHATWG parsing has normalised forms such as `0x7f.1`.
 */
export function refusedUrlHost(url: string): string | null {
  const host = new URL(url).hostname;
  const bare = host.startsWith("[") ? host.slice(1, -1) : host;
  return isIP(bare) ? refusedRange(bare) : null;
}
