import { createHistogram } from "node:perf_hooks";
import autocannon, { type Request } from "autocannon";
import { profiled } from "./cpu-profile.js";
import type { BenchContext } from "./environment.js";
import type { Scenario } from "./scenario.js";

export interface Measurement {
  /** Completed operations per second over the whole measured time. */
  perSecond: number;
  /** Milliseconds. */
  p50: number;
  p99: number;
  completed: number;
  /** Non-2xx answers (API only). */
  non2xx: number;
  /** Connection errors and timeouts (API), thrown errors (driver). */
  errors: number;
  /** Why some operations failed: a few status codes and bodies, or error messages. */
  failures: string[];
}

const SAMPLES = 3;

// One counter for the whole run: every `n` handed to bodies and baselines is unique.
let counter = 0;
const next = () => counter++;

/** Drives the scenario's request with autocannon for `seconds` over `connections` connections. */
export async function measureApi(
  scenario: Scenario,
  context: BenchContext,
  connections: number,
  seconds: number,
  signal: AbortSignal,
): Promise<Measurement> {
  const failures: string[] = [];
  const note = (text: string) => {
    if (failures.length < SAMPLES) failures.push(text);
  };
  const { bodyOf } = scenario;
  const hasBody = bodyOf !== undefined || scenario.body !== undefined;
  const request: Request = {
    method: scenario.method,
    path: scenario.path,
    headers: {
      authorization: `Bearer ${context.apiKey}`,
      ...(hasBody ? { "content-type": "application/json" } : {}),
    },
    onResponse(status, body) {
      if (status < 200 || status > 299) note(`HTTP ${status}: ${body.slice(0, 300)}`);
    },
  };
  const { pathOf } = scenario;
  if (scenario.body !== undefined) request.body = JSON.stringify(scenario.body);
  if (bodyOf || pathOf) {
    request.setupRequest = (raw) => {
      const n = next();
      return {
        ...raw,
        ...(pathOf ? { path: pathOf(n, context) } : {}),
        ...(bodyOf ? { body: JSON.stringify(bodyOf(n, context)) } : {}),
      };
    };
  }

  const instance = autocannon({
    url: context.baseUrl,
    connections,
    duration: seconds,
    requests: [request],
  });
  instance.on("reqError", (error: Error) => note(`request error: ${error.message}`));
  const stop = () => instance.stop();
  signal.addEventListener("abort", stop, { once: true });
  try {
    const result = await profiled(`${scenario.name}-api-${connections}`, async () => instance);
    return {
      perSecond: result.requests.total / result.duration,
      p50: result.latency.p50,
      p99: result.latency.p99,
      completed: result.requests.total,
      non2xx: result.non2xx,
      errors: result.errors + result.timeouts,
      failures,
    };
  } finally {
    signal.removeEventListener("abort", stop);
  }
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
        if (failures.length < SAMPLES) failures.push(`driver error: ${(error as Error).message}`);
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
