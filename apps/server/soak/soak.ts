import { randomBytes } from "node:crypto";
import { loadConfig } from "../src/config.js";
import { startEmbeddedDatabase } from "../src/platform/database/embedded.js";
import { createLogger } from "../src/platform/logger.js";
import { createTcpProxy, type TcpProxy } from "../test/helpers/tcp-proxy.js";
import { testCertificate } from "../test/helpers/test-certificate.js";
import { type Audit, audit } from "./audit.js";
import { createSlot, freePort, type ServerSlot } from "./processes.js";
import { type CountingReceiver, startCountingReceiver } from "./receiver.js";
import { createSoakWorkspace, readAllAttempts, readAllEvents } from "./workspace.js";
import { type Answers, startWriter, type Writer } from "./writer.js";

/**
 * The crash trials (docs/decisions.md, "Crash trials"), as one function the CLI (run.ts) and the smoke test call.
 *
 * What it proves: against a database that outlives every server process, with a client writing
 * at a steady rate and a receiver counting deliveries,
 *  1. SIGKILLing the API process (ROLE=api), the delivery process (ROLE=worker) and a combined one
 *     (ROLE=all) at random moments, and restarting them, loses nothing: every accepted write has
 *     exactly its event, and every event reaches the receiver at least once (duplicates counted);
 *  2. cutting the database away under load (a TCP proxy between the servers and the database, so
 *     no data is lost with it) gives 503s and never a 500 or a hang, and once it is back nothing
 *     accepted is missing and every event is delivered.
 *
 * Phases, in order: `split` (an api and a worker process; kills of each, in random order),
 * `outage` (the database cut for `outageMs`), `all` (one ROLE=all process; its kills), `drain`
 * (writing stops; the trial waits until every event is delivered, or `drainMs` passes).
 */

export interface SoakOptions {
  /** A database to use (MONGODB_URI); without it, the embedded one is started and stopped here. */
  mongodbUri?: string;
  kills: { api: number; worker: number; all: number };
  /** How long the database stays cut; 0 skips the outage. */
  outageMs: number;
  /** Writes per second. */
  rate: number;
  /** A kill comes at a random moment this long after the process is ready (ms, min and max). */
  killGapMs: [number, number];
  /** How long the drain may wait for the last events and deliveries. */
  drainMs: number;
  /**
   * Whether creates go on while processes are killed and the database is cut (default true).
   * Off, the writer creates for a moment first and then only patches (idempotent by their
   * value), which keeps the smoke test clear of the open finding on creates (docs/decisions.md).
   */
  createsUnderFire?: boolean;
  /**
   * Settings added to every server's environment, e.g. a lease shorter than the default
   * (`WEBHOOK_TIMEOUT_MS` + 30 s) that a killed worker's lanes are held for.
   */
  env?: Record<string, string>;
  /** Progress lines. */
  log: (line: string) => void;
}

export interface SoakReport {
  audit: Audit;
  kills: { api: number; worker: number; all: number };
  /** Processes that exited without being killed (each restarted). */
  unexpectedExits: number;
  /** The writer's answers per phase (`split`, `outage`, `recovery`, `all`). */
  answers: Answers;
  rejected: Writer["rejected"];
  unresolved: number;
  skippedTicks: number;
  receiverRequests: number;
  badSignatures: number;
  /** Milliseconds the drain took until everything was delivered (or gave up). */
  drainMs: number;
  runSeconds: number;
  /** The last output of the processes, when the trial failed. */
  diagnostics: string;
}

const ADMIN_TOKEN = `soak-${randomBytes(8).toString("hex")}`;

/**
 * Quick retries and relay sweeps, so a restarted process catches up in seconds; but retries spread
 * over ~20 s and a 5 s timeout, so that kills and a loaded machine do not use up an event's five
 * attempts within one kill storm (a delivery whose attempts all fail is dropped by design).
 */
const SOAK_ENV = {
  ADMIN_TOKEN,
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
  WEBHOOK_RETRY_DELAYS: "200ms,1s,5s,15s",
  WEBHOOK_POLL_INTERVAL_MS: "100",
  WEBHOOK_TIMEOUT_MS: "5000",
  EVENT_RELAY_INTERVAL_MS: "1000",
  RATE_LIMIT_PER_SECOND: "0",
};

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const between = ([min, max]: [number, number]) => min + Math.random() * (max - min);

export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const startedAt = Date.now();
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    const trial = await setUp(options, cleanups, startedAt);
    await splitPhase(trial, options);
    await outagePhase(trial, options);
    await allPhase(trial, options);
    return await drain(trial, options);
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  }
}

/** What the phases share: the proxy to the database, the receiver, the processes and the writer. */
interface Trial {
  startedAt: number;
  proxy: TcpProxy;
  receiver: CountingReceiver;
  slots: { api: ServerSlot; worker: ServerSlot; all: ServerSlot };
  workspace: Awaited<ReturnType<typeof createSoakWorkspace>>;
  writer: Writer;
  kills: SoakReport["kills"];
}

/** The database (behind its proxy), the receiver, the processes (api and worker started), the writer. */
async function setUp(
  options: SoakOptions,
  cleanups: (() => Promise<unknown>)[],
  startedAt: number,
): Promise<Trial> {
  const database = options.mongodbUri
    ? { uri: options.mongodbUri }
    : await startEmbeddedDatabase(createLogger("info"), loadConfig().embeddedDatabase);
  if ("stop" in database) cleanups.push(() => database.stop());
  const proxy = await createTcpProxy(database.uri);
  await proxy.open();
  cleanups.push(() => proxy.cut());
  const certificate = testCertificate();
  const receiver = await startCountingReceiver(certificate);
  cleanups.push(() => receiver.close());
  const env = {
    ...SOAK_ENV,
    MONGODB_URI: proxy.uri,
    MONGODB_DATABASE: `deskline_soak_${Date.now().toString(36)}${randomBytes(2).toString("hex")}`,
    NODE_EXTRA_CA_CERTS: certificate.certFile,
    ...options.env,
  };
  // One port for the API, whichever process serves it: the writer keeps one base URL.
  const port = await freePort();
  const slots = {
    api: await createSlot("api", env, port),
    worker: await createSlot("worker", env),
    all: await createSlot("all", env, port),
  };
  cleanups.push(...Object.values(slots).map((slot) => () => slot.kill()));
  await Promise.all([slots.api.start(), slots.worker.start()]);
  const where = "stop" in database ? "embedded" : "MONGODB_URI";
  options.log(`database ${where} via proxy ${proxy.uri}; API ${slots.api.baseUrl}`);
  const workspace = await createSoakWorkspace(slots.api.baseUrl, ADMIN_TOKEN, receiver.url);
  receiver.useSecret(workspace.secret);
  const writer = startWriter({ baseUrl: slots.api.baseUrl, apiKey: workspace.apiKey, rate: options.rate });
  cleanups.push(() => writer.stop());
  if (options.createsUnderFire === false) {
    await sleep(2000);
    writer.setCreateShare(0);
  }
  return { startedAt, proxy, receiver, slots, workspace, writer, kills: { api: 0, worker: 0, all: 0 } };
}

function progress({ kills, writer, receiver, startedAt }: Trial, options: SoakOptions, phase: string): void {
  options.log(
    `${phase}: kills api ${kills.api}, worker ${kills.worker}, all ${kills.all}; ` +
      `${writer.accepted.length} writes accepted, ${writer.inFlight()} in flight; ` +
      `${receiver.requests()} deliveries; ${((Date.now() - startedAt) / 1000).toFixed(0)} s`,
  );
}

async function killAndRestart(trial: Trial, options: SoakOptions, slot: ServerSlot): Promise<void> {
  await sleep(between(options.killGapMs));
  await slot.kill();
  trial.kills[slot.role]++;
  await slot.start();
}

/** An api and a worker process; kills of each, in random order. */
async function splitPhase(trial: Trial, options: SoakOptions): Promise<void> {
  const { api, worker } = trial.slots;
  trial.writer.setPhase("split");
  const order = shuffle([
    ...Array<ServerSlot>(options.kills.api).fill(api),
    ...Array<ServerSlot>(options.kills.worker).fill(worker),
  ]);
  for (const [index, slot] of order.entries()) {
    await killAndRestart(trial, options, slot);
    if ((index + 1) % 10 === 0) progress(trial, options, "split");
  }
}

/** The database cut for `outageMs` while writing. */
async function outagePhase(trial: Trial, options: SoakOptions): Promise<void> {
  if (options.outageMs <= 0) return;
  const { proxy, writer } = trial;
  await sleep(1000);
  options.log(`outage: cutting the database for ${options.outageMs} ms while writing`);
  // Answers count under the phase their request was sent and answered in (soak/writer.ts),
  // so "outage" starts once the cut is made and ends before the database is back. An answer
  // in flight at the cut, or one to a request that waited the outage out, is a rightful 200.
  await proxy.cut();
  writer.setPhase("outage");
  await sleep(options.outageMs);
  writer.setPhase("recovery");
  await proxy.open();
  await sleep(Math.max(3000, options.outageMs / 2));
  progress(trial, options, "outage");
}

/** One ROLE=all process in place of the two; its kills. */
async function allPhase(trial: Trial, options: SoakOptions): Promise<void> {
  const { api, worker, all } = trial.slots;
  await Promise.all([api.stop(), worker.stop()]);
  trial.writer.setPhase("all");
  await all.start();
  for (let index = 0; index < options.kills.all; index++) {
    await killAndRestart(trial, options, all);
    if ((index + 1) % 10 === 0) progress(trial, options, "all");
  }
  await sleep(1000);
}

/** Writing stops; waits until every event is delivered (or `drainMs` passes), then audits. */
async function drain(trial: Trial, options: SoakOptions): Promise<SoakReport> {
  const { writer, receiver, workspace, slots } = trial;
  options.log(`drain: writing stops (${writer.inFlight()} writes in flight); waiting for every delivery`);
  writer.setPhase("drain");
  await writer.stop();
  const drainStarted = Date.now();
  const ledger = { accepted: writer.accepted, uncertain: writer.uncertain, deliveries: receiver.counts };
  const timedOut = () => Date.now() - drainStarted > options.drainMs;
  for (;;) {
    if (receiver.counts.size >= writer.accepted.length || timedOut()) {
      const result = audit({ ...ledger, events: await readAllEvents(slots.all.baseUrl, workspace.apiKey) });
      const done = result.missingEvents.length === 0 && result.undelivered.length === 0;
      if (done || timedOut()) break;
    }
    await sleep(2000);
  }
  // Late duplicates (an attempt interrupted by a kill, retried by another process) arrive too.
  await sleep(2000);
  const result = audit({
    ...ledger,
    events: await readAllEvents(slots.all.baseUrl, workspace.apiKey),
    attempts: await readAllAttempts(slots.all.baseUrl, workspace.apiKey, workspace.endpointId),
  });
  return report(trial, result, Date.now() - drainStarted);
}

function report(trial: Trial, result: Audit, drainMs: number): SoakReport {
  const { writer, receiver, kills } = trial;
  const slots = Object.values(trial.slots);
  const failed = result.missingEvents.length + result.undelivered.length + result.extraEvents.length > 0;
  return {
    audit: result,
    kills,
    unexpectedExits: slots.reduce((sum, slot) => sum + slot.unexpectedExits(), 0),
    answers: writer.answers,
    rejected: writer.rejected,
    unresolved: writer.unresolved(),
    skippedTicks: writer.skippedTicks(),
    receiverRequests: receiver.requests(),
    badSignatures: receiver.badSignatures(),
    drainMs,
    runSeconds: (Date.now() - trial.startedAt) / 1000,
    diagnostics:
      failed || writer.rejected.length ? slots.map((s) => `--- ${s.role}\n${s.outputTail()}`).join("\n") : "",
  };
}

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}
