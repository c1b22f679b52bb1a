import { cpus } from "node:os";
import type { Db } from "mongodb";
import { startTestServer } from "../test/helpers/server.js";
import { type BenchContext, newRunId, startBenchDatabase, startScenarioServer } from "./environment.js";
import { measureApi, measureDriver, timeOnce } from "./measure.js";
import type { Measurement } from "./measurement.js";
import { formatTable, type Report, toJson } from "./report.js";
import type { Dataset, Scenario } from "./scenario.js";
import { scenarios as allScenarios } from "./scenarios.js";

/**
 * `pnpm bench`: the API against the raw MongoDB driver, scenario by scenario, at 16 and 64
 * connections, in one process: one database server, and per scenario a fresh database (used by
 * both the API and the driver) with an API server on it. Not a test: it asserts nothing about
 * speed and fails (exit 1) only when a request is not answered 2xx. Scenarios: scenarios.ts.
 *
 *   BENCH_SECONDS=5         seconds per measurement
 *   BENCH_SCENARIOS=a,b     only these scenarios
 *   MONGODB_URI=...         a real deployment instead of the embedded database
 *   --json                  machine-readable results on stdout
 */
const CONNECTIONS = [16, 64];
const WARMUP_SECONDS = 1;
// Enough to warm the JIT; few, so that few requests are left to wait for when it stops.
const WARMUP_CONNECTIONS = 4;

function positiveNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!(value > 0))
    throw new Error(`${name} must be a positive number of seconds, got ${JSON.stringify(raw)}`);
  return value;
}

function selectScenarios() {
  const wanted = process.env.BENCH_SCENARIOS?.split(",")
    .map((name) => name.trim())
    .filter(Boolean);
  if (!wanted?.length) return allScenarios;
  const unknown = wanted.filter((name) => !allScenarios.some((s) => s.name === name));
  if (unknown.length) {
    throw new Error(
      `unknown BENCH_SCENARIOS ${unknown.join(", ")}; known: ${allScenarios.map((s) => s.name).join(", ")}`,
    );
  }
  return allScenarios.filter((s) => wanted.includes(s.name));
}

const startedAt = performance.now();
const log = (line: string) =>
  process.stderr.write(`[${((performance.now() - startedAt) / 1000).toFixed(1).padStart(5)} s] ${line}\n`);

/** What every step of one run shares: the report it fills, its seconds, and Ctrl-C. */
interface Run {
  report: Report;
  seconds: number;
  signal: AbortSignal;
}

async function main(): Promise<number> {
  const json = process.argv.includes("--json");
  const seconds = positiveNumber("BENCH_SECONDS", 5);
  const scenarios = selectScenarios();
  const interrupted = new AbortController();
  process.once("SIGINT", () => interrupted.abort());
  const { signal } = interrupted;
  const runId = newRunId();
  const report: Report = {
    seconds,
    node: process.versions.node,
    cpus: cpus().length,
    database: "",
    rows: [],
    failures: [],
  };
  const run: Run = { report, seconds, signal };

  log("starting the database…");
  const database = await startBenchDatabase();
  try {
    for (const [index, group] of groupByDataset(scenarios).entries()) {
      if (signal.aborted) break;
      await runGroup(run, group, { uri: database.uri, name: `deskline_bench_${runId}_${index}`, runId });
    }
  } finally {
    log("stopping the database…");
    await database.stop();
  }

  if (signal.aborted) report.failures.push("interrupted (SIGINT)");
  process.stdout.write(`${json ? toJson(report) : formatTable(report)}\n`);
  if (report.failures.length) {
    const reasons = report.failures.map((f) => `  - ${f}`).join("\n");
    log(`FAILED: every request must be answered 2xx.\n${reasons}`);
    return 1;
  }
  return 0;
}

/** Notes a measurement's failed requests in the report (the run then fails). */
function check(report: Report, what: string, m: Measurement) {
  if (m.non2xx + m.errors === 0) return;
  const examples = m.failures.length ? `; e.g. ${m.failures.join(" | ")}` : "";
  report.failures.push(`${what}: ${m.non2xx} non-2xx, ${m.errors} errors${examples}`);
}

/**
 * One group of scenarios (groupByDataset) on a fresh database `database.name`, with a server of
 * its own and the group's dataset seeded once.
 */
async function runGroup(run: Run, group: Scenario[], database: { uri: string; name: string; runId: string }) {
  const server = await startScenarioServer(database.uri, database.name, database.runId);
  const { context } = server;
  try {
    // The load must stay on this machine.
    if (new URL(context.baseUrl).hostname !== "127.0.0.1") {
      throw new Error(`refusing to load ${context.baseUrl}`);
    }
    run.report.database ||= await describeDatabase(context.db);
    const dataset = group[0]?.dataset;
    if (dataset) {
      log(`${dataset.name}: seeding ${context.baseUrl}, database ${database.name}…`);
      context.seededIds = await dataset.seed(context);
    }
    for (const scenario of group) {
      if (run.signal.aborted) break;
      await runScenario(run, scenario, context, database);
    }
  } finally {
    await server.stop();
  }
}

/** A scenario on the group's server, or on a server of its own when its settings differ. */
async function runScenario(
  run: Run,
  scenario: Scenario,
  groupContext: BenchContext,
  database: { uri: string; name: string },
) {
  const own =
    scenario.server &&
    (await startTestServer({
      mongodbUri: database.uri,
      databaseName: database.name,
      config: scenario.server,
    }));
  try {
    await measureScenario(run, scenario, own ? { ...groupContext, baseUrl: own.baseUrl } : groupContext);
  } finally {
    await own?.stop();
  }
}

/**
 * A scenario's rows: its seed, an untimed warm-up, then at each connection count the API, its
 * floor (if it has one) and the driver, the server settling between measurements.
 */
async function measureScenario({ report, seconds, signal }: Run, scenario: Scenario, context: BenchContext) {
  log(`${scenario.name}: ${context.baseUrl}`);
  if (scenario.seed) {
    log(`${scenario.name}: seeding…`);
    await scenario.seed(context);
  }
  const operation = await scenario.baseline.prepare(context);
  const idleMs = Math.min(await timeOnce(operation), await timeOnce(operation), await timeOnce(operation));
  const settle = () => settleServer(context, operation, idleMs, signal);
  // Untimed: lets the JIT, the pools and the database caches settle first. The driver needs
  // none of its own: it is the very module instance the server has just warmed.
  check(
    report,
    `${scenario.name} warm-up`,
    await measureApi(scenario, context, WARMUP_CONNECTIONS, WARMUP_SECONDS, signal),
  );
  await settle();
  const floor = await scenario.floor?.start(context);
  try {
    for (const connections of CONNECTIONS) {
      if (signal.aborted) break;
      log(`${scenario.name}: ${connections} connections…`);
      const api = await measureApi(scenario, context, connections, seconds, signal);
      check(report, `${scenario.name} × ${connections}`, api);
      await settle();
      let floorMeasurement: Measurement | undefined;
      if (floor) {
        const atFloor = { ...context, baseUrl: floor.baseUrl };
        floorMeasurement = await measureApi(scenario, atFloor, connections, seconds, signal);
        check(report, `${scenario.name} floor × ${connections}`, floorMeasurement);
        await settle();
      }
      const driver = await measureDriver(operation, connections, seconds, signal);
      check(report, `${scenario.name} raw × ${connections}`, driver);
      if (signal.aborted) break; // a cut-short measurement is not a result
      const baseline = scenario.baseline.label;
      report.rows.push({
        scenario: scenario.name,
        connections,
        api,
        baseline,
        driver,
        ...(floorMeasurement && {
          floor: { label: scenario.floor?.label ?? "", measured: floorMeasurement },
        }),
      });
    }
  } finally {
    await floor?.stop();
  }
}

/**
 * Scenarios in runs that share a database: those naming the same dataset together (in their
 * order), every other scenario alone, on a fresh database that no earlier scenario has filled.
 */
function groupByDataset(scenarios: Scenario[]): Scenario[][] {
  const groups: Scenario[][] = [];
  const byDataset = new Map<Dataset, Scenario[]>();
  for (const scenario of scenarios) {
    const { dataset } = scenario;
    const shared = dataset && byDataset.get(dataset);
    if (shared) {
      shared.push(scenario);
      continue;
    }
    const group = [scenario];
    groups.push(group);
    if (dataset) byDataset.set(dataset, group);
  }
  return groups;
}

/**
 * autocannon drops the requests still in flight when it stops, but the server goes on with them
 * and the database may be busy with their queries for a while (most queries scan on mongo-java-server).
 * One more API request waits for the server's pool queue to pass (first come, first served);
 * then the baseline operation is timed until it is about as fast as on an idle database, so the
 * next measurement does not pay for this one.
 */
async function settleServer(
  context: BenchContext,
  operation: (n: number) => Promise<unknown>,
  idleMs: number,
  signal: AbortSignal,
): Promise<void> {
  await context.api("GET", "/open/v1/contacts?limit=1");
  const giveUpAt = performance.now() + 60_000;
  while (!signal.aborted && performance.now() < giveUpAt) {
    if ((await timeOnce(operation)) <= idleMs * 2 + 5) return;
  }
}

async function describeDatabase(db: Db): Promise<string> {
  const info = await db.admin().command({ buildInfo: 1 });
  // mongod reports the commit it was built from; mongo-java-server only the version it speaks.
  return typeof info.gitVersion === "string"
    ? `MongoDB ${info.version}`
    : `mongo-java-server (speaks MongoDB ${info.version})`;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    log(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exitCode = 1;
  },
);
