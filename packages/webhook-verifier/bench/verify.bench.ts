// Verifications per second next to the bare-crypto floor of the same payload, in the same run.
// Floor (sync): createHmac + timingSafeEqual against a pre-decoded signature. Floor (async):
// crypto.subtle.sign with a pre-imported key + a byte comparison. The verifier additionally parses
// the header, validates it and checks the tolerance, so ratio = verifier / floor ≤ ~1.
//   pnpm -F @deskline/webhook-verifier bench
import { createHmac, timingSafeEqual, webcrypto } from "node:crypto";
import { signPayload, verifySignature, verifySignatureAsync } from "../src/index.js";

const SECRET = "whsec_dGVzdC1zZWNyZXQtMDEyMzQ1Njc4OWFiY2RlZmdoaWo=";
const T = 1700000000;
const OPTIONS = { now: T };
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 100);

function payloadOf(bytes: number, nonAscii: boolean): string {
  const unit = nonAscii ? "Zoë €🎉 東京 " : "The quick brown fox ";
  let s = unit.repeat(Math.ceil(bytes / Buffer.byteLength(unit)) + 1);
  while (Buffer.byteLength(s) > bytes) s = s.slice(0, -1);
  return s;
}

async function opsPerSecond(fn: () => unknown, isAsync: boolean): Promise<number> {
  let n = 0;
  const start = performance.now();
  const end = start + ROUND_MS;
  if (isAsync) {
    while (performance.now() < end) {
      for (let i = 0; i < 16; i++) await fn();
      n += 16;
    }
  } else {
    while (performance.now() < end) {
      for (let i = 0; i < 16; i++) fn();
      n += 16;
    }
  }
  return (n * 1000) / (performance.now() - start);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;

/**
 * Alternates floor and subject in short rounds, so load from other processes hits both alike;
 * the ratio is the median of the per-round ratios, the ops/s the medians of each side.
 */
async function compare(floor: () => unknown, subject: () => unknown, isAsync: boolean) {
  const f: number[] = [];
  const s: number[] = [];
  await opsPerSecond(floor, isAsync);
  await opsPerSecond(subject, isAsync);
  for (let r = 0; r < ROUNDS; r++) {
    f.push(await opsPerSecond(floor, isAsync));
    s.push(await opsPerSecond(subject, isAsync));
  }
  return { floor: median(f), subject: median(s), ratio: median(s.map((x, i) => x / (f[i] as number))) };
}

const subtle = webcrypto.subtle;
const encoder = new TextEncoder();
const key = await subtle.importKey("raw", encoder.encode(SECRET), { name: "HMAC", hash: "SHA-256" }, false, [
  "sign",
]);

const rows: string[][] = [];
for (const size of [1024, 64 * 1024]) {
  for (const nonAscii of [false, true]) {
    const text = payloadOf(size, nonAscii);
    const header = signPayload(text, SECRET, { timestamp: T });
    const expected = Buffer.from(header.slice(header.indexOf("v1=") + 3), "hex");
    for (const kind of ["string", "Buffer"] as const) {
      const payload = kind === "string" ? text : Buffer.from(text);
      const prefix = `${T}.`;
      const syncFloor =
        typeof payload === "string"
          ? () =>
              timingSafeEqual(
                createHmac("sha256", SECRET).update(prefix).update(payload, "utf8").digest(),
                expected,
              )
          : () =>
              timingSafeEqual(createHmac("sha256", SECRET).update(prefix).update(payload).digest(), expected);
      const asyncFloor = async () => {
        let data: Uint8Array;
        if (typeof payload === "string") data = encoder.encode(prefix + payload);
        else {
          data = new Uint8Array(prefix.length + payload.byteLength);
          encoder.encodeInto(prefix, data);
          data.set(payload, prefix.length);
        }
        const mac = new Uint8Array(await subtle.sign("HMAC", key, data));
        let diff = 0;
        for (let i = 0; i < mac.length; i++) diff |= (mac[i] as number) ^ (expected[i] as number);
        return diff === 0;
      };
      const label = `${size / 1024} KiB ${nonAscii ? "non-ASCII" : "ASCII"} ${kind}`;
      const sync = await compare(syncFloor, () => verifySignature(payload, header, SECRET, OPTIONS), false);
      rows.push([label, "sync", fmt(sync.floor), fmt(sync.subject), sync.ratio.toFixed(2)]);
      const web = await compare(
        asyncFloor,
        () => verifySignatureAsync(payload, header, SECRET, OPTIONS),
        true,
      );
      rows.push([label, "async", fmt(web.floor), fmt(web.subject), web.ratio.toFixed(2)]);
    }
  }
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

const head = ["payload", "api", "floor ops/s", "verifier ops/s", "ratio"];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
const line = (r: string[]) =>
  `| ${r.map((c, i) => (i >= 2 ? c.padStart(widths[i] as number) : c.padEnd(widths[i] as number))).join(" | ")} |`;
console.log(
  `node ${process.version}, ${ROUNDS} rounds of ${ROUND_MS} ms each, medians; ratio = median of per-round verifier/floor`,
);
console.log(line(head));
console.log(`|${widths.map((w, i) => (i >= 2 ? `${"-".repeat(w + 1)}:` : "-".repeat(w + 2))).join("|")}|`);
for (const r of rows) console.log(line(r));
const worst = Math.min(...rows.map((r) => Number(r[4])));
console.log(`lowest ratio: ${worst.toFixed(2)} (aim ≥ 0.90)`);
