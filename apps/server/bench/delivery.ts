import { apiWriteRate, barePost } from "./delivery-baselines.js";
import type { Bench } from "./delivery-deployment.js";
import { drains } from "./delivery-drain.js";
import { fairness, rateLimitAcrossWorkers, sameHost } from "./delivery-endpoints.js";
import { fanOuts } from "./delivery-fan-out.js";
import { certificate, loadAverage, receiver } from "./delivery-kit.js";
import { roleAll, separateWorker } from "./delivery-latency.js";
import { throughProxy } from "./delivery-proxy.js";
import { type Figures, formatReport } from "./delivery-report.js";
import { startBenchDatabase } from "./environment.js";

/**
 * `pnpm bench` (delivery part): how fast an API write reaches a webhook receiver. Server
 * processes (src/main.ts) with a ROLE each; the bench POSTs contacts to the API and an HTTPS
 * receiver on 127.0.0.1 notes when each `contact.created` arrives.
 *
 *  1. latency write → receiver at 100 writes/s, with ROLE=all (the endpoint's lane runs in the
 *     process that wrote it, which hears of the delivery in memory) and with ROLE=api + a separate
 *     ROLE=worker process (woken as webhooks/delivery/wake.ts says: on the embedded database it
 *     looks for due deliveries every 20 ms);
 *  2. the write's own answer, ROLE=all at 100 writes/s, in a workspace with one subscribed
 *     endpoint against one with none, in the same process one after the other (none, one, one,
 *     none; half of BENCH_SECONDS each): a write answers once its event is stored, so queueing
 *     its deliveries should cost it little;
 *  3. sustained deliveries/s, two ways: a backlog written as fast as the API takes it while the
 *     same ROLE=all process delivers it (bound by the write rate when delivery keeps up), and the
 *     drain rate of one ROLE=worker process started on a backlog a ROLE=api process wrote (first
 *     to last arrival: the deliveries alone);
 *  4. fairness: one endpoint's receiver answers after 2 s and has 500 deliveries waiting; another
 *     endpoint's deliveries (a stream of writes in another workspace) should still arrive at
 *     once, since each endpoint has a lane of its own (docs/decisions.md, "One schedule: the
 *     delivery records");
 *  5. fan-out: 2,000 deliveries to 2,000 endpoints (100 workspaces × 20, one event each) against
 *     the same 2,000 to 10 endpoints, each drained by one ROLE=worker that joins once they are
 *     queued; and the 10-endpoint fan-out again beside the 2,000 endpoints that delivered
 *     earlier (idle lanes must cost nothing);
 *  6. same host: the fairness row with both endpoints on one receiver host (two paths of one
 *     port), so only a pool per endpoint keeps the fast one's sockets free;
 *  6b. a rate limit across a fleet: an endpoint with `rate_limit` and a backlog, drained by two
 *     ROLE=worker processes: the rate its receiver sees against the limit (target within 10 %);
 *  6c. an egress proxy: a drain and a ROLE=all stream through a CONNECT proxy on 127.0.0.1
 *     (WEBHOOK_PROXY_URL), each beside the same measured direct (delivery-proxy.ts);
 *  7. baselines from the same run: a bare undici POST to the same receiver (the floor of a
 *     delivery's latency) and the API's own create-contact rate (autocannon, 16 connections).
 *
 * Each scenario is a function in a module beside this one (delivery-baselines.ts,
 * delivery-latency.ts, delivery-drain.ts, delivery-fan-out.ts, delivery-endpoints.ts,
 * delivery-proxy.ts); `main` runs
 * them in turn, each after the last has stopped its processes, and prints delivery-report.ts's table.
 *
 *   BENCH_SECONDS=5   seconds of the 100/s streams and of the API measurement
 *   BENCH_DRAIN_BACKLOG=10000  deliveries queued before the draining worker starts
 *   BENCH_FAIRNESS_SECONDS=30  seconds of writes to the fast endpoint beside the slow one
 *   BENCH_FANOUT=2000  deliveries of each fan-out row
 *   BENCH_RATE_LIMIT_SECONDS=60  how long the rate-limited endpoint's backlog lasts at its limit
 *   BENCH_CPU_PROF=dir  write a V8 CPU profile of each server process there (node --cpu-prof)
 */

// The API server's requests cut off when its measurement ends are not worth a log line each.
process.env.TEST_LOG_LEVEL ??= "fatal";

async function main() {
  const startLoad = loadAverage();
  const database = await startBenchDatabase();
  const tls = certificate();
  let figures: Figures;
  try {
    const target = await receiver(tls);
    figures = await measure({ database, tls, target });
    await target.close();
  } finally {
    await database.stop();
  }
  process.stdout.write(formatReport(figures, startLoad));
}

/** Every scenario, in the order of the run; each stops what it started before the next begins. */
async function measure(bench: Bench): Promise<Figures> {
  const baselines = { ...(await barePost(bench)), ...(await apiWriteRate(bench)) };
  const all = await roleAll(bench);
  const { plain, sealed } = await drains(bench);
  const proxied = await throughProxy(bench);
  const worker = await separateWorker(bench);
  const fanOut = await fanOuts(bench);
  const pacedRate = await rateLimitAcrossWorkers(bench);
  const fair = await fairness(bench);
  const oneHost = await sameHost(bench);
  return {
    ...baselines,
    ...all,
    drain: plain,
    sealedDrain: sealed,
    proxied,
    worker,
    ...fanOut,
    pacedRate,
    ...fair,
    sameHost: oneHost,
  };
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
