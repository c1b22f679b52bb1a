import { type Arrivals, arrivalRate, arrivalsOf, writeBacklog } from "./delivery-backlog.js";
import { type Bench, deployment } from "./delivery-deployment.js";
import { receiver } from "./delivery-kit.js";
import {
  FAIR_RATE,
  FAIR_SECONDS,
  log,
  RATE_LIMIT,
  RATE_LIMIT_SECONDS,
  SLOW_ANSWER_MS,
  SLOW_BACKLOG,
} from "./delivery-settings.js";
import { type Streamed, stream } from "./delivery-stream.js";

/**
 * What one endpoint does to deliveries: a slow endpoint must not hold up a fast one (each has a
 * lane, and a pool, of its own), and an endpoint's rate limit holds across a fleet of workers.
 */

/** A rate limit held by two workers: the backlog written first, then the workers join. */
export async function rateLimitAcrossWorkers(bench: Bench) {
  const limited = await receiver(bench.tls);
  const fleet = await deployment(bench, ["api"]);
  const write = await fleet.writer(limited.url, { rate_limit: RATE_LIMIT });
  const paced = await writeBacklog(write, RATE_LIMIT * RATE_LIMIT_SECONDS);
  await Promise.all([fleet.join("worker"), fleet.join("worker")]);
  const arrivals = await arrivalsOf(limited, paced, { firstMs: 200, maxMs: 1_000 });
  const pacedRate = arrivalRate(arrivals).perSecond;
  log(`rate limit ${RATE_LIMIT}/s across two workers: ${pacedRate.toFixed(2)}/s`);
  await fleet.stop();
  await limited.close();
  return pacedRate;
}

/** Fairness: a slow endpoint (answers after 2 s) with a backlog, a fast one beside it. */
export async function fairness(bench: Bench) {
  const slow = await receiver(bench.tls, { answerAfterMs: SLOW_ANSWER_MS });
  const { fast: fair, deployed } = await fastBesideSlow(bench, slow.url, bench.target.url, bench.target);
  const slowArrived = slow.arrived.size;
  log(
    `fast endpoint at ${FAIR_RATE}/s beside a slow one: ${JSON.stringify(fair)}; the slow one got ${slowArrived} of ${SLOW_BACKLOG}`,
  );
  await deployed.stop();
  await slow.close();
  return { fair, slowArrived };
}

/** The same on one receiver host: the slow endpoint's path answers after 2 s. */
export async function sameHost(bench: Bench): Promise<Streamed> {
  const twoPaths = await receiver(bench.tls, {
    // The receiver's URL ends in /hooks: the slow path is /hooks/slow.
    answerAfterMs: (path) => (path.endsWith("/slow") ? SLOW_ANSWER_MS : 0),
  });
  const { fast, deployed } = await fastBesideSlow(
    bench,
    `${twoPaths.url}/slow`,
    `${twoPaths.url}/fast`,
    twoPaths,
  );
  log(`fast endpoint beside a slow one on the same host: ${JSON.stringify(fast)}`);
  await deployed.stop();
  await twoPaths.close();
  return fast;
}

/**
 * A ROLE=all deployment whose endpoint at `slowUrl` has SLOW_BACKLOG deliveries waiting, and a
 * stream written beside it to an endpoint at `fastUrl` (arriving at `to`); the deployment is left
 * running, so the caller reads the slow receiver before its deliveries stop. The timeout is above
 * the slow receiver's delay, so its deliveries succeed, slowly.
 */
async function fastBesideSlow(bench: Bench, slowUrl: string, fastUrl: string, to: Arrivals) {
  const deployed = await deployment(bench, ["all"], { WEBHOOK_TIMEOUT_MS: String(SLOW_ANSWER_MS + 3_000) });
  await writeBacklog(await deployed.writer(slowUrl), SLOW_BACKLOG);
  const write = await deployed.writer(fastUrl);
  const fast = await stream(write, deployed.cpu, { duration: FAIR_SECONDS, rate: FAIR_RATE, to });
  return { fast, deployed };
}
