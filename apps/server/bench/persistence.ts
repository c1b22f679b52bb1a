import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config.js";
import { type EmbeddedDatabase, startEmbeddedDatabase } from "../src/platform/database/embedded.js";
import { createLogger } from "../src/platform/logger.js";
import { contactBody, contactScenarios } from "./contacts.js";
import { type BenchContext, newRunId, seedMany, startScenarioServer } from "./environment.js";
import { measureApi } from "./measure.js";
import type { Measurement } from "./measurement.js";

/**
 * `pnpm bench` (after startup.ts): what keeping `pnpm start`'s data costs. The embedded database
 * twice in one run, the same engine (mongod where one can be had, else mongo-java-server, or
 * DESKLINE_EMBEDDED_DB's), once in memory (`--ephemeral`, the tests) and once persistent in a
 * temporary data directory (`pnpm start`: mongod's WiredTiger files, or mongo-java-server's H2
 * file); an API server on each, the same contacts seeded through the API. Each scenario is
 * measured on both twice, in the order A B B A, and the ratio of the means printed. MONGODB_URI is not used: it is
 * the embedded database being measured. Not a test: it asserts nothing about speed.
 *
 *   BENCH_SECONDS=5                  seconds per measurement
 *   BENCH_PERSISTENCE_CONTACTS=1000  contacts seeded before the measurements
 */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONTACTS = Number(process.env.BENCH_PERSISTENCE_CONTACTS ?? 1_000);
const CONNECTIONS = 16;
const WARMUP_SECONDS = 1;
const SCENARIOS = ["get-contact", "create-contact", "list-contacts"];

const log = (line: string) => process.stderr.write(`${line}\n`);

interface Variant {
  name: string;
  database: EmbeddedDatabase;
  context: BenchContext;
  stop(): Promise<void>;
}

async function startVariant(name: string, dataDir: string | undefined, runId: string): Promise<Variant> {
  const database = await startEmbeddedDatabase(createLogger("warn"), loadConfig().embeddedDatabase, {
    dataDir,
  });
  try {
    const server = await startScenarioServer(database.uri, `deskline_bench_persistence_${runId}`, runId);
    log(`${name}: ${database.kind}, ${dataDir ?? "in memory"}; seeding ${CONTACTS} contacts…`);
    server.context.seededIds = await seedMany(server.context, CONTACTS, "/open/v1/contacts", (n) =>
      contactBody(n, { ...server.context, runId: `${runId}-seed` }),
    );
    return {
      name,
      database,
      context: server.context,
      stop: async () => {
        await server.stop();
        await database.stop();
      },
    };
  } catch (error) {
    await database.stop();
    throw error;
  }
}

const signal = new AbortController().signal;

interface Rate {
  perSecond: number;
  p99: number;
}

const mean = (all: Measurement[]): Rate => ({
  perSecond: all.reduce((sum, m) => sum + m.perSecond, 0) / all.length,
  p99: all.reduce((sum, m) => sum + m.p99, 0) / all.length,
});

async function main(): Promise<void> {
  const runId = newRunId();
  const dataDir = await mkdtemp(join(tmpdir(), "deskline-bench-data-"));
  const variants: Variant[] = [];
  try {
    variants.push(await startVariant("in memory", undefined, runId));
    variants.push(await startVariant("persistent", dataDir, runId));
    const rows: string[] = [];
    for (const name of SCENARIOS) {
      const scenario = contactScenarios.find((s) => s.name === name);
      if (!scenario) throw new Error(`no scenario ${name} in contacts.ts`);
      for (const variant of variants) await measureApi(scenario, variant.context, 4, WARMUP_SECONDS, signal);
      // A, B, B, A: whatever drifts during the four (the machine's load, the JIT, a growing
      // collection) weighs on both variants alike.
      const results = new Map<Variant, Measurement[]>(variants.map((variant) => [variant, []]));
      for (const variant of [...variants, ...[...variants].reverse()]) {
        log(`${name}: ${variant.name}, ${CONNECTIONS} connections…`);
        const measured = await measureApi(scenario, variant.context, CONNECTIONS, SECONDS, signal);
        if (measured.non2xx + measured.errors > 0)
          throw new Error(`${name} (${variant.name}): ${measured.failures.join(" | ")}`);
        results.get(variant)?.push(measured);
      }
      const [memory, persistent] = variants.map((variant) => mean(results.get(variant) ?? [])) as [
        Rate,
        Rate,
      ];
      rows.push(
        `| ${name} | ${memory.perSecond.toFixed(0)} | ${memory.p99.toFixed(1)} | ${persistent.perSecond.toFixed(0)} | ${persistent.p99.toFixed(1)} | ${(persistent.perSecond / memory.perSecond).toFixed(2)}× |`,
      );
    }
    const kind = variants[0]?.database.kind;
    process.stdout.write(
      [
        `embedded database kept on disk vs in memory: ${kind}, ${CONTACTS} contacts seeded, ${CONNECTIONS} connections, ${SECONDS} s × 2 each (A B B A), Node ${process.versions.node}`,
        "| scenario | in memory req/s | p99 ms | persistent req/s | p99 ms | persistent / in memory |",
        "|---|--:|--:|--:|--:|--:|",
        ...rows,
        "",
      ].join("\n"),
    );
  } finally {
    for (const variant of variants) await variant.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  log(`persistence bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
});
