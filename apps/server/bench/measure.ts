import { createHistogram } from "node:perf_hooks";
import { Worker } from "node:worker_threads";
import { profiled } from "./cpu-profile.js";
import type { RequestContext } from "./environment.js";
import { FAILURE_SAMPLES, type LoadOrder, type Measurement } from "./measurement.js";
import type { Scenario } from "./scenario.js";

// One counter for the whole run: every `n` handed to bodies and baselines is unique.
let counter = 0;
const next = () => counter++;
/** Numbers for one load run: more than any run sends (it would need 10^9 requests). */
const RESERVED_PER_LOAD = 1e9;

/**
 * Drives the scenario's request with autocannon for `seconds` over `connections` connections,
 * from a worker thread (load-worker.ts), so that this thread is the server's alone.
 */
export async function measureApi(
  scenario: Scenario,
  context: RequestContext,
  connections: number,
  seconds: number,
  signal: AbortSignal,
): Promise<Measurement> {
  const firstN = counter;
  counter += RESERVED_PER_LOAD;
  const { baseUrl, apiKey, workspaceId, runId, seededIds, contactId } = context;
  const order: LoadOrder = {
    scenario: scenario.name,
    context: { baseUrl, apiKey, workspaceId, runId, seededIds, contactId },
    connections,
    seconds,
    firstN,
  };
  return profiled(`${scenario.name}-api-${connections}`, () => inWorker(order, signal));
}

const loadWorker = new URL("./load-worker.ts", import.meta.url).href;
// A worker does not inherit tsx's loader; this registers it, then imports the worker's module.
const bootstrap = `import(${JSON.stringify(import.meta.resolve("tsx/esm/api"))})
  .then(({ tsImport }) => tsImport(${JSON.stringify(loadWorker)}, ${JSON.stringify(loadWorker)}))`;

function inWorker(order: LoadOrder, signal: AbortSignal): Promise<Measurement> {
  const worker = new Worker(bootstrap, { eval: true, workerData: order });
  const stop = () => worker.postMessage("stop");
  signal.addEventListener("abort", stop, { once: true });
  return new Promise<Measurement>((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`the load worker exited (${code}) without a result`)));
  }).finally(() => {
    signal.removeEventListener("abort", stop);
    void worker.terminate();
  });
}

/**
 * Runs `operation` for `seconds` with `concurrency` calls in flight at any time. Like autocannon,
 * it counts only what completes within the window; the calls still in flight then are awaited
 * (so the next measurement starts on an idle database) but not counted.
 */
export async function measureDriver(
  operation: (n: number) => Promise<unknown>,
  concurrency: number,
  seconds: number,
  signal: AbortSignal,
): Promise<Measurement> {
  const histogram = createHistogram();
  const failures: string[] = [];
  let completed = 0;
  let errors = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const worker = async () => {
    // One failure ends the measurement: the run fails anyway, and a broken database would
    // otherwise fail as fast as it can for the whole duration.
    while (performance.now() < deadline && !signal.aborted && errors === 0) {
      const begun = process.hrtime.bigint();
      try {
        await operation(next());
        if (performance.now() > deadline) continue;
        const took = process.hrtime.bigint() - begun;
        histogram.record(took > 0n ? took : 1n);
        completed++;
      } catch (error) {
        errors++;
        if (failures.length < FAILURE_SAMPLES) failures.push(`driver error: ${(error as Error).message}`);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const window = (Math.min(performance.now(), deadline) - started) / 1000;
  const ms = (percentile: number) => (completed ? histogram.percentile(percentile) / 1e6 : 0);
  return {
    perSecond: completed / window,
    p50: ms(50),
    p99: ms(99),
    completed,
    non2xx: 0,
    errors,
    failures,
  };
}

/** Milliseconds one call of `operation` takes, alone. */
export async function timeOnce(operation: (n: number) => Promise<unknown>): Promise<number> {
  const begun = performance.now();
  await operation(next());
  return performance.now() - begun;
}
