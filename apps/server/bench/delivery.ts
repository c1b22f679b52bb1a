import { loadavg } from "node:os";
import autocannon from "autocannon";
import { Agent, request } from "undici";
import { startTestServer } from "../test/helpers/server.js";
import { benchWorkspace, certificate, childPid, cpuMs, post, receiver, startServer } from "./delivery-kit.js";
import { newRunId, startBenchDatabase } from "./environment.js";

/**
 * `pnpm bench` (delivery part): how fast an API write reaches a webhook receiver. Server
 * processes (src/main.ts) with a ROLE each; the bench POSTs contacts to the API and an HTTPS
 * receiver on 127.0.0.1 notes when each `contact.created` arrives.
 *
 *  1. latency write → receiver at 100 writes/s, with ROLE=all (a new job runs at once in the
 *     process that wrote it) and with ROLE=api + a separate ROLE=worker process (woken by the
 *     wake channel, delivery/wake-channel.ts: on the embedded database it polls every 20 ms);
 *  2. sustained deliveries/s, two ways: a backlog written as fast as the API takes it while the
 *     same ROLE=all process delivers it (bound by the write rate when delivery keeps up), and the
 *     drain rate of one ROLE=worker process started on a backlog a ROLE=api process wrote (first
 *     to last arrival: the deliveries alone);
 *  3. baselines from the same run: a bare undici POST to the same receiver (the floor of a
 *     delivery's latency) and the API's own create-contact rate (autocannon, 16 connections).
 *
 *   BENCH_SECONDS=5   seconds of the 100/s stream and of the API measurement
 *   BENCH_DRAIN_BACKLOG=10000  deliveries queued before the draining worker starts
 *   BENCH_CPU_PROF=dir  write a V8 CPU profile of each server process there (node --cpu-prof)
 */

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
// The API server's requests cut off when its measurement ends are not worth a log line each.
process.env.TEST_LOG_LEVEL ??= "fatal";
const RATE = 100;
const BACKLOG = 1000;
/** The drain's backlog (issue 25: one worker drains 10,000 queued deliveries). */
const DRAIN_BACKLOG = Number(process.env.BENCH_DRAIN_BACKLOG ?? 10_000);
const log = (line: string) => process.stderr.write(`[delivery bench] ${line}\n`);

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
};
const ms = (n: number) => `${n.toFixed(1)} ms`;

async function main() {
  const startLoad = loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");
  const database = await startBenchDatabase();
  const tls = certificate();
  const runId = newRunId();
  const results: Record<string, unknown> = {};
  try {
    // Baseline 1: a bare POST to the receiver, one at a time (keep-alive, as deliveries are).
    const target = await receiver(tls);
    const agent = new Agent({ connect: { ca: tls.cert } });
    const bare: number[] = [];
    for (let i = 0; i < 500; i++) {
      const t = performance.now();
      const res = await request(target.url, { method: "POST", body: "{}", dispatcher: agent });
      await res.body.dump();
      bare.push(performance.now() - t);
    }
    await agent.close();
    results.bareP50 = percentile(bare, 50);
    results.bareP99 = percentile(bare, 99);
    log(
      `bare POST to the receiver: p50 ${ms(results.bareP50 as number)}, p99 ${ms(results.bareP99 as number)}`,
    );

    // Baseline 2: the API's own write rate (create contact) on this database server.
    const api = await startTestServer({ mongodbUri: database.uri, databaseName: `bench_api_${runId}` });
    const ws = (await (
      await fetch(`${api.baseUrl}/admin/v1/workspaces`, {
        method: "POST",
        headers: { authorization: `Bearer ${api.adminToken}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "bench" }),
      })
    ).json()) as { id: string };
    const keyed = (await (
      await fetch(`${api.baseUrl}/admin/v1/workspaces/${ws.id}/api-keys`, {
        method: "POST",
        headers: { authorization: `Bearer ${api.adminToken}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "bench", scopes: ["contacts:write"] }),
      })
    ).json()) as { key: string };
    const writes = await autocannon({
      url: `${api.baseUrl}/open/v1/contacts`,
      method: "POST",
      connections: 16,
      duration: seconds,
      headers: { authorization: `Bearer ${keyed.key}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Bench" }),
    });
    await api.stop();
    results.apiWritesPerSecond = writes.requests.total / writes.duration;
    log(`API create-contact: ${(results.apiWritesPerSecond as number).toFixed(0)} writes/s`);

    /** Server processes (src/main.ts) on a database of their own; the first one serves the API. */
    const deployment = async (roles: Array<"all" | "api" | "worker">) => {
      const databaseName = `bench_delivery_${roles.join("_")}_${newRunId()}`;
      const processes = roles.map((role) => startServer(database.uri, databaseName, role, tls.certFile));
      const baseUrl = await processes[0]?.baseUrl;
      await Promise.all(processes.filter((p) => p.role !== "api").map((p) => p.delivering));
      const { auth } = await benchWorkspace(baseUrl as string);
      await post(
        `${baseUrl}/open/v1/webhook-endpoints`,
        { url: target.url, events: ["contact.created"] },
        auth,
      );
      /** One API write (create contact); its event id is found by the contact id it carries. */
      const write = async () => {
        const started = performance.now();
        const contact = await post(`${baseUrl}/open/v1/contacts`, { name: "Bench" }, auth);
        return { contactId: contact.id as string, started, answered: performance.now() };
      };
      /** Starts one more process on the same database (a worker joining later). */
      const join = async (role: "worker") => {
        const joined = startServer(database.uri, databaseName, role, tls.certFile);
        processes.push(joined);
        await joined.delivering;
        return joined.child.pid;
      };
      const stop = async () => {
        for (const p of processes) p.child.kill("SIGTERM");
        await Promise.all(processes.map((p) => p.exited));
      };
      /** CPU ms used so far by each process, by role. */
      const cpu = () => processes.map((p) => ({ role: p.role, ms: cpuMs(p.child.pid) }));
      return { write, join, stop, cpu };
    };

    /** BACKLOG writes, 16 at a time; the contact ids. */
    const writeBacklog = async (write: () => Promise<{ contactId: string }>, size = BACKLOG) => {
      const ids: string[] = [];
      for (let i = 0; i < size; i += 16) {
        const batch = await Promise.all(Array.from({ length: 16 }, () => write()));
        ids.push(...batch.map((b) => b.contactId));
      }
      return ids;
    };
    /** Waits until every one of `ids` has arrived; when each did. */
    const arrivalOf = async (ids: string[]) => {
      while (ids.some((id) => !target.arrived.has(id))) await new Promise((done) => setTimeout(done, 50));
      return ids.map((id) => target.arrived.get(id) as number);
    };

    type Written = { contactId: string; started: number; answered: number };
    type Cpu = () => { role: string; ms: number }[];
    const stream = async (write: () => Promise<Written>, cpu: Cpu, duration = seconds) => {
      const cpuBefore = cpu();
      const sent: Written[] = [];
      const total = RATE * duration;
      const t0 = performance.now();
      const pending: Promise<void>[] = [];
      for (let i = 0; i < total; i++) {
        const wait = t0 + (i * 1000) / RATE - performance.now();
        if (wait > 0) await new Promise((done) => setTimeout(done, wait));
        pending.push(write().then((s) => void sent.push(s)));
      }
      await Promise.all(pending);
      const deadline = performance.now() + 120_000;
      while (sent.some((s) => !target.arrived.has(s.contactId)) && performance.now() < deadline) {
        await new Promise((done) => setTimeout(done, 50));
      }
      const latencies = sent.map((s) => (target.arrived.get(s.contactId) ?? Number.NaN) - s.started);
      const lost = latencies.filter(Number.isNaN).length;
      const arrived = latencies.filter((l) => !Number.isNaN(l));
      // The API's answer time is part of the latency: a slow write shows here, not in delivery.
      const answers = sent.map((s) => s.answered - s.started);
      const cpuPerEvent = cpu()
        .map((c, i) => `${c.role} ${((c.ms - (cpuBefore[i]?.ms ?? 0)) / total).toFixed(2)} ms`)
        .join(", ");
      return {
        cpuPerEvent,
        p50: percentile(arrived, 50),
        p99: percentile(arrived, 99),
        lost,
        writeP50: percentile(answers, 50),
        writeP99: percentile(answers, 99),
      };
    };

    // 1a. ROLE=all: one process writes and delivers (a new job runs at once).
    const all = await deployment(["all"]);
    // A second of the same stream first, unmeasured: the process's first requests compile code.
    await stream(all.write, all.cpu, 1);
    results.all = await stream(all.write, all.cpu);
    log(`ROLE=all at ${RATE}/s: ${JSON.stringify(results.all)}`);

    // 2. Sustained: a backlog written as fast as the API takes it, drained by the ROLE=all process.
    const writeStart = performance.now();
    const backlog = await writeBacklog(all.write);
    const writtenIn = (performance.now() - writeStart) / 1000;
    await arrivalOf(backlog);
    const drainedIn =
      (Math.max(...backlog.map((id) => target.arrived.get(id) as number)) - writeStart) / 1000;
    results.deliveriesPerSecond = BACKLOG / drainedIn;
    results.backlogWritesPerSecond = BACKLOG / writtenIn;
    log(`sustained: ${BACKLOG} writes in ${writtenIn.toFixed(1)} s, delivered in ${drainedIn.toFixed(1)} s`);
    await all.stop();

    // 2b. Drain: ROLE=api writes a backlog nobody delivers yet, then one ROLE=worker joins.
    const drain = await deployment(["api"]);
    const queued = await writeBacklog(drain.write, DRAIN_BACKLOG);
    const workerPid = await drain.join("worker");
    // The embedded database (when the bench started one) and this process (the receiver) share
    // the machine with the worker: their CPU per delivery says where a drain's time goes.
    const databasePid = childPid("java");
    const [workerCpu, databaseCpu, receiverCpu] = [cpuMs(workerPid), cpuMs(databasePid), process.cpuUsage()];
    const arrivals = await arrivalOf(queued);
    results.drainCpuPerDelivery = (cpuMs(workerPid) - workerCpu) / queued.length;
    results.drainDatabaseCpuPerDelivery = (cpuMs(databasePid) - databaseCpu) / queued.length;
    const receiverUsed = process.cpuUsage(receiverCpu);
    results.drainReceiverCpuPerDelivery = (receiverUsed.user + receiverUsed.system) / 1000 / queued.length;
    const [first, last] = [Math.min(...arrivals), Math.max(...arrivals)];
    results.drainPerSecond = (queued.length - 1) / ((last - first) / 1000);
    log(`drain: ${queued.length} deliveries in ${((last - first) / 1000).toFixed(2)} s by one worker`);
    await drain.stop();

    // 1b. ROLE=api and a separate ROLE=worker process (woken through its notification channel).
    const split = await deployment(["api", "worker"]);
    await stream(split.write, split.cpu, 1);
    results.worker = await stream(split.write, split.cpu);
    log(`separate worker at ${RATE}/s: ${JSON.stringify(results.worker)}`);
    await split.stop();
    await target.close();
  } finally {
    await database.stop();
  }
  const r = results as {
    bareP50: number;
    bareP99: number;
    apiWritesPerSecond: number;
    deliveriesPerSecond: number;
    drainPerSecond: number;
    drainCpuPerDelivery: number;
    drainDatabaseCpuPerDelivery: number;
    drainReceiverCpuPerDelivery: number;
    all: { p50: number; p99: number; lost: number; writeP50: number; writeP99: number; cpuPerEvent: string };
    worker: {
      p50: number;
      p99: number;
      lost: number;
      writeP50: number;
      writeP99: number;
      cpuPerEvent: string;
    };
  };
  const rows = [
    [
      "write → receiver, ROLE=all",
      ms(r.all.p50),
      ms(r.all.p99),
      `${(r.all.p50 / r.bareP50).toFixed(1)}× bare POST p50 (${ms(r.bareP50)}); the write's answer p50 ${ms(r.all.writeP50)}, p99 ${ms(r.all.writeP99)}`,
    ],
    [
      "write → receiver, separate worker",
      ms(r.worker.p50),
      ms(r.worker.p99),
      `${(r.worker.p50 / r.bareP50).toFixed(1)}× bare POST p50; the write's answer p50 ${ms(r.worker.writeP50)}, p99 ${ms(r.worker.writeP99)}`,
    ],
  ];
  process.stdout.write(
    `\nWebhook delivery (${RATE} events/s for ${seconds} s; HTTPS receiver on 127.0.0.1)\n` +
      `| scenario | p50 | p99 | vs baseline |\n|---|--:|--:|---|\n${rows.map((row) => `| ${row.join(" | ")} |`).join("\n")}\n` +
      `| sustained deliveries/s (ROLE=all, ${BACKLOG} backlog) | ${r.deliveriesPerSecond.toFixed(0)}/s | | ${(r.deliveriesPerSecond / r.apiWritesPerSecond).toFixed(2)}× the API's create-contact rate (${r.apiWritesPerSecond.toFixed(0)}/s) |\n` +
      `| drain deliveries/s (one ROLE=worker, ${DRAIN_BACKLOG} queued) | ${r.drainPerSecond.toFixed(0)}/s | | ${(r.drainPerSecond / r.apiWritesPerSecond).toFixed(2)}× the API's create-contact rate; worker CPU ${r.drainCpuPerDelivery.toFixed(2)} ms per delivery (database ${r.drainDatabaseCpuPerDelivery.toFixed(2)} ms, receiver and bench ${r.drainReceiverCpuPerDelivery.toFixed(2)} ms) |\n` +
      `server CPU per event at ${RATE}/s: ROLE=all: ${r.all.cpuPerEvent}; separate: ${r.worker.cpuPerEvent}\n` +
      `lost: ROLE=all ${r.all.lost}, worker ${r.worker.lost}; load average at the end ${loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")} (${startLoad} at the start)\n`,
  );
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
