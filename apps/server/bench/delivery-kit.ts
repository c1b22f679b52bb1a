import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";

/**
 * What the delivery benchmarks share (delivery.ts and its scenario modules, recovery.ts): a
 * throwaway TLS certificate, an HTTPS receiver that notes when each delivery arrived, server
 * processes (src/main.ts) with a ROLE each that trust it, a JSON POST, and a process's CPU time.
 */

export const ADMIN_TOKEN = "bench-admin";

export function certificate() {
  const dir = mkdtempSync(join(tmpdir(), "deskline-bench-"));
  const [cert, key] = [join(dir, "cert.pem"), join(dir, "key.pem")];
  execFileSync(
    "openssl",
    [
      ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"],
      ...[
        "-keyout",
        key,
        "-out",
        cert,
        "-days",
        "1",
        "-subj",
        "/CN=bench",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
      ],
    ],
    { stdio: "ignore" },
  );
  return { certFile: cert, cert: readFileSync(cert, "utf8"), key: readFileSync(key, "utf8") };
}

/**
 * An HTTPS receiver that notes when each delivery arrived (by its contact id; and how many came,
 * and when the last did); with `answerAfterMs`, a slow one that answers that long after the
 * request came in (what a struggling customer's server does), or slow on some paths only.
 */
export async function receiver(
  tls: { cert: string; key: string },
  options: { answerAfterMs?: number | ((path: string) => number) } = {},
) {
  const arrived = new Map<string, number>();
  const count = { arrivals: 0, lastAt: 0 };
  const server = createServer(tls, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const at = performance.now();
      const text = Buffer.concat(chunks).toString();
      // Deliveries are keyed by the contact id of their event; the baseline's posts by nothing.
      const id = text.startsWith('{"id":"evt_') ? (JSON.parse(text) as { data: { id: string } }).data.id : "";
      arrived.set(id, at);
      count.arrivals++;
      count.lastAt = at;
      const { answerAfterMs } = options;
      const wait = typeof answerAfterMs === "function" ? answerAfterMs(req.url ?? "") : answerAfterMs;
      if (wait) setTimeout(() => res.writeHead(204).end(), wait);
      else res.writeHead(204).end();
    });
  });
  server.listen(0, "127.0.0.1");
  await new Promise((done) => server.once("listening", done));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  const close = () =>
    new Promise((done) => {
      server.close(done);
      // A slow receiver may still hold requests it has not answered.
      server.closeAllConnections();
    });
  return { url, arrived, count, close };
}

/** A JSON request (POST unless `method` says otherwise); throws, naming the answer, unless 2xx. */
export async function post(
  url: string,
  body: unknown,
  headers: Record<string, string>,
  method: "POST" | "PATCH" = "POST",
) {
  const res = await request(url, {
    method,
    body: JSON.stringify(body),
    headers: { "content-type": "application/json", ...headers },
  });
  const json = (await res.body.json()) as Record<string, unknown> & { id: string; key: string };
  if (res.statusCode >= 300) throw new Error(`${url}: ${res.statusCode} ${JSON.stringify(json)}`);
  return json;
}

/**
 * A server process (src/main.ts) with a ROLE, trusting the receiver's certificate; `env` adds or
 * overrides settings (e.g. WEBHOOK_TIMEOUT_MS).
 */
export function startServer(
  uri: string,
  databaseName: string,
  role: "all" | "api" | "worker",
  certFile: string,
  env: Record<string, string> = {},
) {
  const profile = process.env.BENCH_CPU_PROF
    ? ["--cpu-prof", "--cpu-prof-dir", process.env.BENCH_CPU_PROF]
    : [];
  const child = spawn(process.execPath, [...profile, "--import", "tsx", "src/main.ts"], {
    cwd: join(import.meta.dirname, ".."),
    env: {
      ...process.env,
      PORT: "0",
      MONGODB_URI: uri,
      MONGODB_DATABASE: databaseName,
      ADMIN_TOKEN,
      ROLE: role,
      LOG_LEVEL: "info",
      RATE_LIMIT_PER_SECOND: "0",
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
      NODE_EXTRA_CA_CERTS: certFile,
      ...env,
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  const seen = (pattern: RegExp) =>
    new Promise<RegExpExecArray>((resolve) => {
      const check = () => {
        const match = pattern.exec(output);
        if (match) {
          child.stdout?.off("data", check);
          resolve(match);
        }
      };
      child.stdout?.on("data", (chunk: Buffer) => {
        // Only start-up lines matter; request logs are dropped unread.
        if (output.length < 100_000) output += chunk.toString();
        check();
      });
    });
  return {
    role,
    child,
    // Once ready: it answers 503 until its migrations and indexes are done.
    baseUrl: role === "worker" ? undefined : seen(/"baseUrl":"([^"]+)"/).then((m) => ready(m[1] as string)),
    delivering: seen(/delivering webhooks/),
    exited: new Promise((done) => child.once("exit", done)),
  };
}

/** `baseUrl` once its `/readyz` answers 200. */
async function ready(baseUrl: string): Promise<string> {
  for (;;) {
    const status = await fetch(`${baseUrl}/readyz`).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) return baseUrl;
    await new Promise((done) => setTimeout(done, 50));
  }
}

/** The machine's load averages (1, 5, 15 min) as a report prints them: a benchmark shares its machine. */
export const loadAverage = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");

/**
 * CPU time (user + system) a process has used so far, in ms, from /proc (Linux; NaN elsewhere).
 * On a shared machine latency depends on the other processes; CPU per event does not.
 */
export function cpuMs(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    // Fields 14 and 15 of stat (utime, stime), counted from the state field (3): 11 and 12 here.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // USER_HZ is 100 on Linux
  } catch {
    return Number.NaN;
  }
}

/**
 * The pid of this process's child named `command` (e.g. the embedded database's `java`), from
 * /proc (Linux; undefined elsewhere or when there is none).
 */
export function childPid(command: string): number | undefined {
  try {
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (name === command && parent === process.pid) return Number(entry);
    }
  } catch {
    // Not Linux, or a process ended while being read: no figure.
  }
  return undefined;
}

/**
 * A workspace made through the admin API, with a key that writes contacts and manages webhooks:
 * what every delivery bench writes with. `auth` is the header that key goes in.
 */
export async function benchWorkspace(baseUrl: string): Promise<{ id: string; auth: Record<string, string> }> {
  const admin = (path: string, body: unknown) =>
    post(`${baseUrl}${path}`, body, { authorization: `Bearer ${ADMIN_TOKEN}` });
  const ws = await admin("/admin/v1/workspaces", { name: "bench" });
  const { key } = await admin(`/admin/v1/workspaces/${ws.id}/api-keys`, {
    name: "bench",
    scopes: ["contacts:write", "webhooks:manage"],
  });
  return { id: ws.id, auth: { authorization: `Bearer ${key}` } };
}
