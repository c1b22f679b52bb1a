import { arrivalsOf, writeBacklog } from "./delivery-backlog.js";
import { type Bench, type Deployment, deployment } from "./delivery-deployment.js";
import { BACKLOG, log, RATE, seconds } from "./delivery-settings.js";
import { type Streamed, stream, summary, writeAtRate } from "./delivery-stream.js";

/**
 * Write → receiver at RATE writes a second: in one ROLE=all process (with the write's answer
 * beside a workspace with no endpoint, and the rate it sustains), and with a separate worker.
 */

/** ROLE=all: one process writes and delivers (the endpoint's lane runs at once). */
export async function roleAll(bench: Bench) {
  const all = await deployment(bench, ["all"]);
  // A second of the same stream first, unmeasured: the process's first requests compile code.
  await writeAtRate(all.write, all.cpu, { duration: 1, to: bench.target });
  const answers = await answerBesideNoEndpoint(bench, all);
  const sustained = await sustainedRate(bench, all);
  await all.stop();
  return { ...answers, ...sustained };
}

/**
 * The same process and rate in a workspace with no endpoint: the write's answer alone. In the
 * order none, one, one, none (each run's deliveries done before the next starts), so that a load
 * that drifts during the run weighs on both alike.
 */
async function answerBesideNoEndpoint(bench: Bench, all: Deployment) {
  const unsubscribed = await all.writer(null);
  await writeAtRate(unsubscribed, all.cpu, { duration: 1, to: null });
  const half = { duration: seconds / 2 };
  const none1 = await writeAtRate(unsubscribed, all.cpu, { ...half, to: null });
  const one1 = await writeAtRate(all.write, all.cpu, { ...half, to: bench.target });
  const one2 = await writeAtRate(all.write, all.cpu, { ...half, to: bench.target });
  const none2 = await writeAtRate(unsubscribed, all.cpu, { ...half, to: null });
  const noEndpoint = summary([none1, none2]);
  log(`ROLE=all at ${RATE}/s, no endpoint: ${JSON.stringify(noEndpoint)}`);
  const one = summary([one1, one2]);
  log(`ROLE=all at ${RATE}/s: ${JSON.stringify(one)}`);
  return { all: one, noEndpoint };
}

/** Sustained: a backlog written as fast as the API takes it, drained by the ROLE=all process. */
async function sustainedRate({ target }: Bench, all: Deployment) {
  const writeStart = performance.now();
  const backlog = await writeBacklog(all.write, BACKLOG);
  const writtenIn = (performance.now() - writeStart) / 1000;
  const drainedIn = (Math.max(...(await arrivalsOf(target, backlog))) - writeStart) / 1000;
  log(`sustained: ${BACKLOG} writes in ${writtenIn.toFixed(1)} s, delivered in ${drainedIn.toFixed(1)} s`);
  return { deliveriesPerSecond: BACKLOG / drainedIn, backlogWritesPerSecond: BACKLOG / writtenIn };
}

/** ROLE=api and a separate ROLE=worker process (woken through its notification channel). */
export async function separateWorker(bench: Bench): Promise<Streamed> {
  const split = await deployment(bench, ["api", "worker"]);
  await writeAtRate(split.write, split.cpu, { duration: 1, to: bench.target });
  const worker = await stream(split.write, split.cpu, { to: bench.target });
  log(`separate worker at ${RATE}/s: ${JSON.stringify(worker)}`);
  await split.stop();
  return worker;
}
