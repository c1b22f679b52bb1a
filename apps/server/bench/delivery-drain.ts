import { randomBytes } from "node:crypto";
import { arrivalRate, arrivalsOf, writeBacklog } from "./delivery-backlog.js";
import { type Bench, deployment } from "./delivery-deployment.js";
import { childPid, cpuMs } from "./delivery-kit.js";
import { DRAIN_BACKLOG, log } from "./delivery-settings.js";

/**
 * Drain: ROLE=api writes a backlog nobody delivers yet, then one ROLE=worker joins. Twice: as
 * is, then with the signing secrets encrypted at rest (SECRETS_ENCRYPTION_KEY), which must not
 * show in delivery (the lane opens an endpoint's secrets once per batch).
 */
export async function drains(bench: Bench) {
  const plain = await drainOnce(bench);
  const sealed = await drainOnce(bench, { SECRETS_ENCRYPTION_KEY: randomBytes(32).toString("base64") });
  return { plain, sealed };
}

export type Drained = Awaited<ReturnType<typeof drainOnce>>;

/** One drain of DRAIN_BACKLOG by one worker; `label` names it in the log. */
export async function drainOnce(bench: Bench, env: Record<string, string> = {}, label = "drain") {
  const drain = await deployment(bench, ["api"], env);
  const queued = await writeBacklog(drain.write, DRAIN_BACKLOG);
  const workerPid = await drain.join("worker");
  // The embedded database (when the bench started one) and this process (the receiver) share
  // the machine with the worker: their CPU per delivery says where a drain's time goes.
  const databasePid = childPid("java");
  const [workerCpu, databaseCpu, receiverCpu] = [cpuMs(workerPid), cpuMs(databasePid), process.cpuUsage()];
  const arrivals = await arrivalsOf(bench.target, queued);
  const receiverUsed = process.cpuUsage(receiverCpu);
  // Read before the processes stop: a stopped worker has no CPU figure.
  const [workerUsed, databaseUsed] = [cpuMs(workerPid) - workerCpu, cpuMs(databasePid) - databaseCpu];
  const drained = arrivalRate(arrivals);
  log(
    `${label}${env.SECRETS_ENCRYPTION_KEY ? " (secrets encrypted)" : ""}: ${queued.length} deliveries in ${drained.seconds.toFixed(2)} s by one worker`,
  );
  await drain.stop();
  return {
    perSecond: drained.perSecond,
    cpuPerDelivery: workerUsed / queued.length,
    databaseCpuPerDelivery: databaseUsed / queued.length,
    receiverCpuPerDelivery: (receiverUsed.user + receiverUsed.system) / 1000 / queued.length,
  };
}
