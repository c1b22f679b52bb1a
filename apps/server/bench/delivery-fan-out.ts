import { AGAIN, retry } from "../src/platform/backoff.js";
import type { Bench } from "./delivery-deployment.js";
import { benchWorkspace, post, startServer } from "./delivery-kit.js";
import { FANOUT, FANOUT_PER_WORKSPACE, FEW_ENDPOINTS, log } from "./delivery-settings.js";
import { newRunId } from "./environment.js";

/**
 * Fan-out: the same deliveries to few endpoints and to many, and to few beside many idle ones
 * (idle lanes must cost nothing). Seconds each took, one worker joining once they are queued.
 */
export async function fanOuts(bench: Bench) {
  const fanOutDb = (name: string) => `bench_fanout_${name}_${newRunId()}`;
  // Unmeasured first: a first fan-out on a cold database took 1.7x as long as the same one
  // later, which made the rows compared with it look better than they are.
  await fanOut(bench, fanOutDb("warm"), 1, FEW_ENDPOINTS, FANOUT / FEW_ENDPOINTS / 4);
  const fewEndpoints = await fanOut(bench, fanOutDb("few"), 1, FEW_ENDPOINTS, FANOUT / FEW_ENDPOINTS);
  log(`fan-out: ${FANOUT} deliveries to ${FEW_ENDPOINTS} endpoints in ${fewEndpoints.toFixed(2)} s`);
  const manyDb = fanOutDb("many");
  const manyEndpoints = await fanOut(bench, manyDb, FANOUT / FANOUT_PER_WORKSPACE, FANOUT_PER_WORKSPACE, 1);
  log(`fan-out: ${FANOUT} deliveries to ${FANOUT} endpoints in ${manyEndpoints.toFixed(2)} s`);
  const besideIdle = await fanOut(bench, manyDb, 1, FEW_ENDPOINTS, FANOUT / FEW_ENDPOINTS);
  log(
    `fan-out: ${FANOUT} deliveries to ${FEW_ENDPOINTS} endpoints beside ${FANOUT} idle ones in ${besideIdle.toFixed(2)} s`,
  );
  return { fewEndpoints, manyEndpoints, besideIdle };
}

/**
 * `workspaces` workspaces with `endpointsEach` endpoints at the receiver and `contactsEach`
 * writes each, queued by a ROLE=api process on `databaseName`; then one ROLE=worker joins. The
 * seconds from its start to the last arrival.
 */
async function fanOut(
  { database, tls, target }: Bench,
  databaseName: string,
  workspaces: number,
  endpointsEach: number,
  contactsEach: number,
) {
  const apiProcess = startServer(database.uri, databaseName, "api", tls.certFile);
  const baseUrl = (await apiProcess.baseUrl) as string;
  const writes: Array<() => Promise<unknown>> = [];
  for (let w = 0; w < workspaces; w++) {
    const { auth } = await benchWorkspace(baseUrl);
    for (let e = 0; e < endpointsEach; e++) {
      const url = `${target.url}/${w}/${e}`;
      await post(`${baseUrl}/open/v1/webhook-endpoints`, { url, events: ["contact.created"] }, auth);
    }
    for (let c = 0; c < contactsEach; c++) {
      writes.push(() => post(`${baseUrl}/open/v1/contacts`, { name: "Fan" }, auth));
    }
  }
  for (let i = 0; i < writes.length; i += 16) await Promise.all(writes.slice(i, i + 16).map((w) => w()));
  const expected = target.count.arrivals + workspaces * endpointsEach * contactsEach;
  const worker = startServer(database.uri, databaseName, "worker", tls.certFile);
  await worker.delivering;
  const startedAt = performance.now();
  await retry({ firstMs: 20, maxMs: 100 }, async () => (target.count.arrivals >= expected ? true : AGAIN));
  const took = (target.count.lastAt - startedAt) / 1000;
  for (const p of [worker, apiProcess]) p.child.kill("SIGTERM");
  await Promise.all([worker.exited, apiProcess.exited]);
  return took;
}
