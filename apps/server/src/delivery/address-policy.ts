import { isIPv4, isIPv6 } from "node:net";

/**
 * The SSRF guard's rule (DESIGN.md §6, issue 11 item 4): which IP addresses a webhook delivery may
 * never connect to unless `WEBHOOK_ALLOW_PRIVATE_NETWORKS=true`. Pure: it is asked about the
 * address the connector is about to connect to (after DNS resolution), never about URL text.
 */

/** Why an address is refused; null when it is a public address. */
export type AddressRange =
  | "unspecified"
  | "loopback"
  | "private"
  | "link-local"
  | "carrier-grade NAT"
  | "unique-local"
  | "multicast"
  | "reserved"
  | "broadcast"
  | "not an IP address";

/** [first octets as a number, prefix length, range], IPv4. */
const IPV4_RANGES: [string, number, AddressRange][] = [
  ["0.0.0.0", 8, "unspecified"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "carrier-grade NAT"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local"],
  ["172.16.0.0", 12, "private"],
  ["192.168.0.0", 16, "private"],
  ["224.0.0.0", 4, "multicast"],
  ["255.255.255.255", 32, "broadcast"],
  ["240.0.0.0", 4, "reserved"],
];

function ipv4ToNumber(address: string): number {
  return address.split(".").reduce((n, octet) => n * 256 + Number(octet), 0);
}

const IPV4_MASKED = IPV4_RANGES.map(([base, prefix, range]) => {
  const size = 2 ** (32 - prefix);
  return { start: ipv4ToNumber(base), size, range };
});

function classifyIPv4(address: string): AddressRange | null {
  const n = ipv4ToNumber(address);
  for (const { start, size, range } of IPV4_MASKED) if (n >= start && n < start + size) return range;
  return null;
}

/** The eight 16-bit groups of an IPv6 address (with `::` expanded and a trailing IPv4 part split). */
function ipv6Groups(address: string): number[] {
  let text = address.split("%")[0] as string; // a zone id (fe80::1%eth0) is not part of the address
  const tail: number[] = [];
  const lastColon = text.lastIndexOf(":");
  const last = text.slice(lastColon + 1);
  if (isIPv4(last)) {
    const n = ipv4ToNumber(last);
    tail.push(Math.floor(n / 65536), n % 65536);
    text = `${text.slice(0, lastColon + 1)}0`;
  }
  const [head = "", rest] = text.split("::");
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((g) => Number.parseInt(g, 16)));
  let groups: number[];
  if (rest === undefined) groups = parse(head);
  else {
    const left = parse(head);
    const right = parse(rest);
    groups = [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
  }
  if (tail.length) groups.splice(6, 2, ...tail);
  return groups;
}

function classifyIPv6(address: string): AddressRange | null {
  const g = ipv6Groups(address);
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const firstFiveZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (firstFiveZero && g5 === 0xffff) {
    // IPv4-mapped (::ffff:a.b.c.d): the connection goes to that IPv4 address.
    return classifyIPv4(`${g6 >> 8}.${g6 & 255}.${g7 >> 8}.${g7 & 255}`);
  }
  if (firstFiveZero && g5 === 0 && g6 === 0) {
    if (g7 === 0) return "unspecified";
    if (g7 === 1) return "loopback";
  }
  // IPv4-compatible (::a.b.c.d, deprecated) and NAT64 (64:ff9b::a.b.c.d) reach an IPv4 address too.
  if (firstFiveZero && g5 === 0) return classifyIPv4(`${g6 >> 8}.${g6 & 255}.${g7 >> 8}.${g7 & 255}`);
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    return classifyIPv4(`${g6 >> 8}.${g6 & 255}.${g7 >> 8}.${g7 & 255}`);
  }
  if ((g0 & 0xffc0) === 0xfe80) return "link-local";
  if ((g0 & 0xfe00) === 0xfc00) return "unique-local";
  if ((g0 & 0xff00) === 0xff00) return "multicast";
  return null;
}

/** The refused range `address` is in, or null when deliveries may connect to it. */
export function refusedRange(address: string): AddressRange | null {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  if (isIPv4(bare)) return classifyIPv4(bare);
  if (isIPv6(bare)) return classifyIPv6(bare);
  return "not an IP address";
}
