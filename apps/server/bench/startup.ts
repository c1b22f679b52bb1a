import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { startBenchDatabase } from "./environment.js";

/**
 * `pnpm -F @deskline/server bench:startup`: how fast the production build starts and how much
 * memory it holds, against the same server run from source through tsx (the baseline, in the same
 * process, on the same database). Each run spawns a fresh process with MONGODB_URI set, so the
 * embedded database's own start-up is left out; it measures spawn → "listening" log line,
 * spawn → first /readyz 200, and the resident set size (RSS) once ready and after 200 requests.
 * Needs `pnpm build` first. Not a test: it asserts nothing about speed.
 *
 *   BENCH_STARTUP_RUNS=5   runs per variant (the median is printed)
 */

const serverDir = join(import.meta.dirname, "..");
const VARIANTS = [
  { name: "node dist/main.js (built)", args: ["dist/main.js"] },
  { name: "tsx src/main.ts (source)", args: ["--import", "tsx", "src/main.ts"] },
];

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

async function startOnce(args: string[], mongodbUri: string, databaseName: string): Promise<Run> {
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: serverDir,
    env: {
      ...process.env,
      MONGODB_URI: mongodbUri,
      MONGODB_DATABASE: databaseName,
      PORT: "0",
      LOG_LEVEL: "info",
    },
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
    while (
      (await fetch(`${baseUrl}/readyz`)
        .then((r) => r.status)
        .catch(() => 0)) !== 200
    ) {
      await new Promise((done) => setTimeout(done, 5));
    }
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
  const database = await startBenchDatabase();
  const results: { name: string; run: Run }[] = [];
  try {
    for (const variant of VARIANTS) {
      const all: Run[] = [];
      for (let i = 0; i < runs; i++)
        all.push(await startOnce(variant.args, database.uri, "deskline_bench_startup"));
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
  }
  const [built, source] = results.map((result) => result.run) as [Run, Run];
  const lines = [
    `startup, median of ${runs} runs each, Node ${process.versions.node}`,
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
