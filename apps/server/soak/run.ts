import { failuresOf, formatReport } from "./report.js";
import { runSoak } from "./soak.js";

/**
 * `pnpm soak`: the crash trials (soak.ts says what they prove), with their figures as a table.
 * Exits 1 on any loss (a write without its event, an event never delivered, an event without its
 * write), on a 500 or a hang while the database was away, or on a refused write. Not run in CI:
 * the default took 21 minutes on a saturated machine (an idle one should need about half);
 * test/soak.test.ts runs a short version in `pnpm test`.
 *
 *   SOAK_KILLS=100        SIGKILLs of the api process, and as many of the worker
 *   SOAK_ALL_KILLS=20     SIGKILLs of a ROLE=all process
 *   SOAK_RATE=20          writes per second
 *   SOAK_OUTAGE_MS=10000  how long the database is cut (0: no outage)
 *   SOAK_DRAIN_MS=180000  how long to wait for the last deliveries
 *   MONGODB_URI=...       a database of your own instead of the embedded one
 */

function count(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be an integer >= 0, got ${raw}`);
  return value;
}

const startedAt = performance.now();
const log = (line: string) =>
  process.stderr.write(`[${((performance.now() - startedAt) / 1000).toFixed(1).padStart(6)} s] ${line}\n`);

async function main(): Promise<number> {
  const kills = count("SOAK_KILLS", 100);
  const report = await runSoak({
    mongodbUri: process.env.MONGODB_URI || undefined,
    kills: { api: kills, worker: kills, all: count("SOAK_ALL_KILLS", 20) },
    outageMs: count("SOAK_OUTAGE_MS", 10_000),
    rate: count("SOAK_RATE", 20),
    killGapMs: [200, 1500],
    drainMs: count("SOAK_DRAIN_MS", 180_000),
    log,
  });
  process.stdout.write(`\nDeskline crash trials\n\n${formatReport(report)}\n`);
  const failures = failuresOf(report);
  if (failures.length) {
    log(`FAILED:\n${failures.map((f) => `  - ${f}`).join("\n")}`);
    if (report.diagnostics) log(report.diagnostics);
    return 1;
  }
  log("passed: no loss, no 500, no hang");
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    log(`soak failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exitCode = 1;
  },
);
