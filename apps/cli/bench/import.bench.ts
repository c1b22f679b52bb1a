// `pnpm -F @deskline/cli bench`: imports 100k generated CSV rows with the built CLI against the
// real server, and reports rows/s next to the server's own create rate measured in the same run
// (bare undici POSTs at the same concurrency, also from a process of its own), plus the CLI's
// peak RSS. Targets: ≥ 0.8× the create rate, < 150 MB.
import { execFile } from "node:child_process";
import { once } from "node:events";
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { startTestServer } from "@deskline/test-kit";
import { runCli } from "./run-cli.js";

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const BASELINE_CREATES = Number(process.env.BENCH_BASELINE_CREATES ?? 20_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const runId = Date.now().toString(36);

async function admin(
  baseUrl: string,
  token: string,
  path: string,
  body: unknown,
): Promise<Record<string, string>> {
  const response = await fetch(`${baseUrl}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (response.status !== 201) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as Record<string, string>;
}

async function newKey(baseUrl: string, token: string): Promise<string> {
  const workspace = await admin(baseUrl, token, "/admin/v1/workspaces", { name: "cli bench" });
  const scopes = ["contacts:read", "contacts:write"];
  const created = await admin(baseUrl, token, `/admin/v1/workspaces/${workspace.id}/api-keys`, {
    name: "bench",
    scopes,
  });
  return created.key as string;
}

/** Rows with every column kind the import maps, written as a stream (the file is not held in memory). */
async function writeCsv(path: string): Promise<void> {
  const out = createWriteStream(path);
  out.write("name,email,tags,lifecycle_stage,custom_fields.plan,external_ids.crm,address.city\n");
  for (let i = 0; i < ROWS; i++) {
    const line = `"Person ${i}",person-${runId}-${i}@example.com,bench;t${i % 10},lead,${i % 2 ? "pro" : "free"},crm-${runId}-${i},"City, ${i % 100}"\n`;
    if (!out.write(line)) await once(out, "drain");
  }
  out.end();
  await once(out, "finish");
}

function runImport(baseUrl: string, key: string, file: string, rssFile: string) {
  return runCli(
    baseUrl,
    key,
    ["contacts", "import", file, "--json", "--concurrency", String(CONCURRENCY)],
    rssFile,
  );
}

const dir = mkdtempSync(join(tmpdir(), "deskline-cli-bench-"));
const server = await startTestServer({ databaseName: `deskline_cli_bench_${runId}` });
try {
  const file = join(dir, "contacts.csv");
  await writeCsv(file);
  const { stdout } = await promisify(execFile)(process.execPath, [
    here("./create-baseline.mjs"),
    server.baseUrl,
    await newKey(server.baseUrl, server.adminToken),
    String(BASELINE_CREATES),
    String(CONCURRENCY),
    runId,
  ]);
  const baseline = JSON.parse(stdout);
  const baselineRate = baseline.creates / baseline.seconds;

  const rssFile = join(dir, "rss");
  const { summary, seconds } = await runImport(
    server.baseUrl,
    await newKey(server.baseUrl, server.adminToken),
    file,
    rssFile,
  );
  if (summary.created !== ROWS) throw new Error(`expected ${ROWS} created, got ${JSON.stringify(summary)}`);
  const rate = ROWS / seconds;
  const peakMb = Number(readFileSync(rssFile, "utf8")) / 1024;
  const ratio = rate / baselineRate;

  console.log(
    `\ndeskline contacts import: ${ROWS.toLocaleString("en")} CSV rows, concurrency ${CONCURRENCY}\n`,
  );
  console.log("| measure | value | target |");
  console.log("|---|--:|---|");
  console.log(`| import (CLI, whole process) | ${Math.round(rate)} rows/s (${seconds.toFixed(1)} s) | |`);
  console.log(
    `| server create rate (bare undici, ${BASELINE_CREATES.toLocaleString("en")} creates) | ${Math.round(baselineRate)} creates/s | |`,
  );
  console.log(`| import / create rate | ${ratio.toFixed(2)}× | ≥ 0.8× ${ratio >= 0.8 ? "✓" : "✗"} |`);
  console.log(`| CLI peak RSS | ${peakMb.toFixed(0)} MB | < 150 MB ${peakMb < 150 ? "✓" : "✗"} |`);
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
