// `pnpm -F @deskline/cli bench:export`: exports 100k contacts with the built CLI against the real
// server, as CSV (every column: the spooled path, see docs/decisions.md), as JSON Lines and as CSV
// with --fields, and reports rows/s next to the list endpoint's own page rate measured around each
// export (bare undici, a process of its own), plus the CLI's peak RSS. Targets: ≥ 0.8× the page rate, < 150 MB.
// Rate limiting is off on this server: it would cap both sides alike and hide the comparison.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { startTestServer } from "@deskline/test-kit";
import { runCli } from "./run-cli.js";

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const SEED_CONCURRENCY = 4;
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const runId = Date.now().toString(36);

async function post(baseUrl: string, token: string, path: string, body: unknown, status = 201) {
  const response = await fetch(`${baseUrl}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (response.status !== status) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as Record<string, unknown>;
}

async function newKey(baseUrl: string, token: string): Promise<string> {
  const workspace = await post(baseUrl, token, "/admin/v1/workspaces", { name: "export bench" });
  const created = await post(baseUrl, token, `/admin/v1/workspaces/${workspace.id}/api-keys`, {
    name: "bench",
    scopes: ["contacts:read", "contacts:write"],
  });
  return created.key as string;
}

/** 100k contacts through the batch upsert (100 a request), with every column kind the export writes. */
async function seed(baseUrl: string, key: string): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < ROWS) {
      const start = next;
      next += 100;
      const contacts = [];
      for (let i = start; i < Math.min(start + 100, ROWS); i++) {
        contacts.push({
          name: `Person ${i}`,
          email: `person-${runId}-${i}@example.com`,
          tags: ["bench", `t${i % 10}`],
          lifecycle_stage: "lead",
          custom_fields: { plan: i % 2 ? "pro" : "free", ...(i % 7 === 0 ? { seats: i % 50 } : {}) },
          external_ids: { crm: `crm-${runId}-${i}` },
          address: { city: `City ${i % 100}`, country: "GB" },
        });
      }
      const result = await post(baseUrl, key, "/open/v1/contacts/batch", { match: "email", contacts }, 200);
      const failed = (result.data as { status: string }[]).filter((item) => item.status === "error");
      if (failed.length > 0) throw new Error(`seeding failed: ${JSON.stringify(failed[0])}`);
    }
  };
  await Promise.all(Array.from({ length: SEED_CONCURRENCY }, worker));
}

function runExport(baseUrl: string, key: string, args: string[], rssFile: string) {
  return runCli(baseUrl, key, ["contacts", "export", ...args, "--json"], rssFile);
}

const dir = mkdtempSync(join(tmpdir(), "deskline-cli-export-bench-"));
const server = await startTestServer({
  databaseName: `deskline_cli_export_bench_${runId}`,
  config: { rateLimitPerSecond: 0 },
});
try {
  const key = await newKey(server.baseUrl, server.adminToken);
  const seeding = performance.now();
  await seed(server.baseUrl, key);
  const seedSeconds = (performance.now() - seeding) / 1000;

  // The machine may be shared: each export runs between two baseline runs and is compared with
  // their mean, so a change of load during the bench moves both sides alike.
  const baselines: { items: number; pages: number; seconds: number }[] = [];
  const listBaseline = async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [
      here("./list-baseline.mjs"),
      server.baseUrl,
      key,
    ]);
    const baseline = JSON.parse(stdout) as { items: number; pages: number; seconds: number };
    if (baseline.items !== ROWS)
      throw new Error(`the baseline listed ${baseline.items} contacts, not ${ROWS}`);
    baselines.push(baseline);
    return baseline.items / baseline.seconds;
  };

  const runs = [];
  let before = await listBaseline();
  for (const [label, args] of [
    ["CSV, every column (spooled)", ["--format", "csv"]],
    ["JSON Lines, every column (streamed)", ["--format", "jsonl"]],
    [
      "CSV, --fields (streamed)",
      ["--format", "csv", "--fields", "id,name,email,tags,custom_fields.plan,external_ids.crm,address.city"],
    ],
  ] as const) {
    const name = args.slice(0, 2).join("-") + (args.length > 2 ? "-fields" : "");
    const output = join(dir, `export-${name}`);
    const rssFile = join(dir, `rss-${name}`);
    const { summary, seconds } = await runExport(server.baseUrl, key, [...args, "--output", output], rssFile);
    if (summary.rows !== ROWS) throw new Error(`${label}: exported ${summary.rows} rows, not ${ROWS}`);
    const after = await listBaseline();
    runs.push({
      label,
      seconds,
      rate: ROWS / seconds,
      baselineRate: (before + after) / 2,
      peakMb: Number(readFileSync(rssFile, "utf8")) / 1024,
      sizeMb: statSync(output).size / 1024 / 1024,
    });
    before = after;
  }

  console.log(
    `\ndeskline contacts export: ${ROWS.toLocaleString("en")} contacts (seeded in ${seedSeconds.toFixed(1)} s)\n`,
  );
  console.log("| measure | value | target |");
  console.log("|---|--:|---|");
  console.log(
    `| list endpoint page rate (bare undici, pages of 100; ${baselines.length} runs, one before and after each export) | ${baselines.map((b) => Math.round(b.items / b.seconds)).join(", ")} contacts/s | |`,
  );
  for (const run of runs) {
    const ratio = run.rate / run.baselineRate;
    console.log(
      `| export, ${run.label} (CLI, whole process) | ${Math.round(run.rate)} rows/s (${run.seconds.toFixed(1)} s, ${run.sizeMb.toFixed(0)} MB file) | |`,
    );
    console.log(
      `| … / page rate around it (${Math.round(run.baselineRate)}/s) | ${ratio.toFixed(2)}× | ≥ 0.8× ${ratio >= 0.8 ? "✓" : "✗"} |`,
    );
    console.log(
      `| … CLI peak RSS | ${run.peakMb.toFixed(0)} MB | < 150 MB ${run.peakMb < 150 ? "✓" : "✗"} |`,
    );
  }
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
