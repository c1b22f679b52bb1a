import { parentPort, workerData } from "node:worker_threads";
import autocannon, { type RawResult, type Request } from "autocannon";
import { FAILURE_SAMPLES, type LoadOrder, type Measurement } from "./measurement.js";
import { scenarios } from "./scenarios.js";

/**
 * The load generator: autocannon in a worker thread of its own, started by `measureApi` once per
 * measurement. Apart from the server's thread, it measures what a client on another machine
 * would see, and the server's thread is not slowed by building, parsing and timing the load
 * (in one thread, autocannon took about a third of the CPU the server had).
 *
 * In: `LoadOrder` as workerData; the message "stop" ends the run early. Out: one `Measurement`.
 */

async function run(order: LoadOrder): Promise<Measurement> {
  const scenario = scenarios.find((s) => s.name === order.scenario);
  if (!scenario) throw new Error(`no scenario ${order.scenario}`);
  const { context } = order;
  const failures: string[] = [];
  const note = (text: string) => {
    if (failures.length < FAILURE_SAMPLES) failures.push(text);
  };
  const { bodyOf, pathOf } = scenario;
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
  if (scenario.body !== undefined) request.body = JSON.stringify(scenario.body);
  let n = order.firstN;
  if (bodyOf || pathOf) {
    request.setupRequest = (raw) => {
      const current = n++;
      return {
        ...raw,
        ...(pathOf ? { path: pathOf(current, context) } : {}),
        ...(bodyOf ? { body: JSON.stringify(bodyOf(current, context)) } : {}),
      };
    };
  }

  const options = {
    url: context.baseUrl,
    connections: order.connections,
    duration: order.seconds,
    requests: [request],
  };
  const instance = autocannon(options);
  instance.on("reqError", (error: Error) => note(`request error: ${error.message}`));
  parentPort?.on("message", (message) => {
    if (message === "stop") instance.stop();
  });
  // Off the main thread autocannon leaves its histograms encoded, for a parent to merge.
  const result = autocannon.aggregateResult([(await instance) as unknown as RawResult], options);
  return {
    perSecond: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    completed: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    failures,
  };
}

// A rejection ends the thread and reaches measureApi as the worker's "error" event.
if (parentPort) {
  const port = parentPort;
  void run(workerData as LoadOrder).then((measurement) => port.postMessage(measurement));
}
