import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MongoClient } from "mongodb";
import { loadConfig } from "../src/config.js";
import { Contacts } from "../src/contacts/contacts.js";
import { STRICT_NO_COUNTRY } from "../src/contacts/phone.js";
import { AGAIN, retry } from "../src/platform/backoff.js";
import { startEmbeddedDatabase } from "../src/platform/database/embedded.js";
import { newId } from "../src/platform/ids.js";
import { createLogger } from "../src/platform/logger.js";
import { Tombstones } from "../src/records/tombstones.js";
import { contactBody } from "./contacts.js";
import { newRunId, seedRelay, startBenchDatabase } from "./environment.js";

/**
 * `pnpm -F @deskline/server bench:startup`: how fast the production build starts and how much
 * memory it holds, against the same server run from source through tsx (the baseline, in the same
 * process, on the same database); those runs have MONGODB_URI set, so the embedded database's own
 * start-up is left out. Then `pnpm start` as a user runs it (`node --import tsx src/main.ts --demo`, no
 * MONGODB_URI), its embedded database included: in memory (`--ephemeral`), and persistent in a
 * data directory already holding BENCH_STARTUP_CONTACTS contacts (what a second start reopens;
 * mongo-java-server rebuilds its list index from them). It measures spawn → "listening" log line,
 * spawn → first /readyz 200, and the resident set size (RSS, the server's process only) once
 * ready and after 200 requests. Needs `pnpm build` first. Not a test: it asserts nothing about speed.
 *
 *   BENCH_STARTUP_RUNS=5             runs per variant (the median is printed)
 *   BENCH_STARTUP_CONTACTS=10000     contacts in the persistent variant's data directory
 */

const serverDir = join(import.meta.dirname, "..");
const START = ["--import", "tsx", "src/main.ts", "--demo"];
interface Variant {
  name: string;
  args: string[];
  /** What the variant's process gets in its environment: a database, or where to keep one. */
  env: (places: { mongodbUri: string; dataDir: string }) => Record<string, string>;
}
const onBenchDatabase = ({ mongodbUri }: { mongodbUri: string }) => ({
  MONGODB_URI: mongodbUri,
  MONGODB_DATABASE: "deskline_bench_startup",
});
const VARIANTS: Variant[] = [
  { name: "node dist/main.js (built)", args: ["dist/main.js"], env: onBenchDatabase },
  { name: "tsx src/main.ts (source)", args: ["--import", "tsx", "src/main.ts"], env: onBenchDatabase },
  {
    name: "pnpm start --ephemeral (embedded, in memory)",
    args: [...START, "--ephemeral"],
    env: () => ({ MONGODB_URI: "" }),
  },
  {
    name: "pnpm start (embedded, persistent)",
    args: START,
    env: ({ dataDir }) => ({ MONGODB_URI: "", DESKLINE_DATA_DIR: dataDir }),
  },
];

/**
 * A data directory as a user's second `pnpm start` finds it: `count` contacts in the server's
 * database, written by the server's own code (contacts/contacts.ts), many at a time.
 */
async function filledDataDir(count: number): Promise<string> {
  const dataDir = await mkdtemp(join(tmpdir(), "deskline-bench-startup-"));
  const database = await startEmbeddedDatabase(createLogger("warn"), loadConfig().embeddedDatabase, {
    dataDir,
  });
  const client = await new MongoClient(database.uri).connect();
  try {
    const db = client.db(loadConfig().databaseName);
    const contacts = new Contacts(db, seedRelay(db), new Tombstones(db));
    const workspaceId = newId("ws");
    const runId = newRunId();
    let next = 0;
    const worker = async () => {
      while (next < count)
        await contacts.create(workspaceId, contactBody(next++, { runId }), STRICT_NO_COUNTRY);
    };
    await Promise.all(Array.from({ length: 32 }, worker));
  } finally {
    await client.close();
    await database.stop();
  }
  return dataDir;
}

interface Run {
  listeningMs: number;
  readyMs: number;
  rssReadyMb: number;
  rssLoadedMb: number;
}

async function rssMb(pid: number): Promise<number> {
  const child = spawn("ps", ["-o", "rss=", "-p", String(pid)]);
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  await new Promise((done) => child.once("exit", done));
  return Number(out.trim()) / 1024;
}

async function startOnce(args: string[], env: Record<string, string>): Promise<Run> {
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: serverDir,
    env: { ...process.env, ...env, PORT: "0", LOG_LEVEL: "info" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    let output = "";
    const baseUrl = await new Promise<string>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => {
        output += chunk.toString();
        const match = /"baseUrl":"([^"]+)"/.exec(output);
        if (match?.[1]) resolve(match[1]);
      });
      child.once("exit", (code) => reject(new Error(`exited with ${code}: ${output}`)));
    });
    const listeningMs = performance.now() - started;
    await retry({ firstMs: 5 }, async () => {
      const status = await fetch(`${baseUrl}/readyz`)
        .then((r) => r.status)
        .catch(() => 0);
      return status === 200 ? true : AGAIN;
    });
    const readyMs = performance.now() - started;
    const rssReadyMb = await rssMb(child.pid as number);
    for (let i = 0; i < 200; i++) await (await fetch(`${baseUrl}/open/v1/openapi.json`)).arrayBuffer();
    return { listeningMs, readyMs, rssReadyMb, rssLoadedMb: await rssMb(child.pid as number) };
  } finally {
    child.kill("SIGTERM");
    await new Promise((done) => child.once("exit", done));
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

async function main(): Promise<void> {
  if (!existsSync(join(serverDir, "dist/main.js")))
    throw new Error("no dist/main.js: run `pnpm build` first");
  const runs = Number(process.env.BENCH_STARTUP_RUNS ?? 5);
  const contacts = Number(process.env.BENCH_STARTUP_CONTACTS ?? 10_000);
  const database = await startBenchDatabase();
  process.stderr.write(`filling a data directory with ${contacts} contacts…\n`);
  const dataDir = await filledDataDir(contacts);
  const results: { name: string; run: Run }[] = [];
  try {
    for (const variant of VARIANTS) {
      const all: Run[] = [];
      const env = variant.env({ mongodbUri: database.uri, dataDir });
      for (let i = 0; i < runs; i++) all.push(await startOnce(variant.args, env));
      const pick = (key: keyof Run) => median(all.map((run) => run[key]));
      results.push({
        name: variant.name,
        run: {
          listeningMs: pick("listeningMs"),
          readyMs: pick("readyMs"),
          rssReadyMb: pick("rssReadyMb"),
          rssLoadedMb: pick("rssLoadedMb"),
        },
      });
    }
  } finally {
    await database.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
  const [built, source] = results.map((result) => result.run) as [Run, Run];
  const lines = [
    `startup, median of ${runs} runs each, Node ${process.versions.node}; persistent: ${contacts} contacts in the data directory`,
    "| variant | to listening ms | to /readyz 200 ms | RSS ready MB | RSS after 200 req MB |",
    "|---|--:|--:|--:|--:|",
    ...results.map(
      ({ name, run }) =>
        `| ${name} | ${run.listeningMs.toFixed(0)} | ${run.readyMs.toFixed(0)} | ${run.rssReadyMb.toFixed(0)} | ${run.rssLoadedMb.toFixed(0)} |`,
    ),
    `| built / source | ${(built.listeningMs / source.listeningMs).toFixed(2)}× | ${(built.readyMs / source.readyMs).toFixed(2)}× | ${(built.rssReadyMb / source.rssReadyMb).toFixed(2)}× | ${(built.rssLoadedMb / source.rssLoadedMb).toFixed(2)}× |`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`startup bench failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
