import { afterAll, describe, expect, it, vi } from "vitest";
import { ADDRESS_REFUSED } from "../src/webhooks/delivery/outcome.js";
import { api, newWorkspace } from "./helpers/api.js";
import { type Deployment, startDeployment } from "./helpers/delivery.js";
import { startReceiver } from "./helpers/https-receiver.js";
import { eventually } from "./helpers/main-process.js";

// Webhook delivery across workers: the SSRF guard of a worker that may not reach private
// networks, two workers sharing one database (servers in this process), a worker process
// SIGKILLed in the middle of an attempt, and a worker process stopped with SIGTERM (signals are
// what only a process shows). Each test has its own database.

const SLOW = 90_000;
vi.setConfig({ testTimeout: 180_000 });

const started: { output(): string }[] = [];
afterAll(() => {
  if (process.env.DEBUG_DELIVERY) for (const m of started) console.log(m.output().slice(-3000));
});

/** A deployment with an API process, and a workspace with an endpoint per url. */
async function world(env: Record<string, string> = {}) {
  const deployment: Deployment = await startDeployment(env);
  const apiProcess = await deployment.start("api");
  started.push(apiProcess);
  const baseUrl = await apiProcess.baseUrl;
  const { key, workspaceId } = await newWorkspace(undefined, baseUrl);
  const endpoint = async (url: string) => {
    const created = await api.post("/open/v1/webhook-endpoints", { key, baseUrl, body: { url } });
    expect(created.status).toBe(201);
    return created.body.id as string;
  };
  const attempts = async (endpointId: string) =>
    (await api.get(`/open/v1/webhook-endpoints/${endpointId}/attempts?limit=100`, { key, baseUrl })).body
      .data as Array<{ event_id: string; attempt: number; error: string | null; succeeded: boolean }>;
  const worker = async (extra: Record<string, string> = {}) => {
    const server = await deployment.start("worker", extra);
    started.push(server);
    return server;
  };
  /** A worker process, for a test that signals it. */
  const workerProcess = async (extra: Record<string, string> = {}) => {
    const process = await deployment.startProcess("worker", extra);
    started.push(process);
    return process;
  };
  return { deployment, apiProcess, baseUrl, key, workspaceId, endpoint, attempts, worker, workerProcess };
}

// The tests share nothing (a database each), and mostly wait on workers: they run at once, within
// each block and across these sibling concurrent blocks.
describe.concurrent("delivery across workers: the SSRF guard", () => {
  it("refuses loopback by address and by name unless WEBHOOK_ALLOW_PRIVATE_NETWORKS=true, and records why", async ({
    expect,
  }) => {
    // The API allows private networks, so it accepts IP-literal URLs that a stricter API refuses
    // at once (webhook-address-policy.test.ts); the worker does not, and refuses at connect.
    const w = await world({ WEBHOOK_RETRY_DELAYS: "50ms" });
    const worker = await w.worker({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "false" });
    const receiver = await startReceiver();
    const byAddress = await w.endpoint(receiver.url);
    const byName = await w.endpoint(`https://localhost:${receiver.port}/hooks`);
    const byMappedAddress = await w.endpoint(`https://[::ffff:127.0.0.1]:${receiver.port}/hooks`);
    const event = await w.deployment.emit(w.workspaceId, "contact.created");
    // The customer's attempts log says one stable thing; what the name resolved to goes to the
    // operator's log only.
    for (const [endpointId, operatorLog] of [
      [byAddress, /"reason":"127\.0\.0\.1 is loopback"/],
      [byName, /"host":"localhost","reason":"localhost resolves to (127\.0\.0\.1|::1) is loopback"/],
      [
        byMappedAddress,
        /"reason":"::ffff:(127\.0\.0\.1|7f00:1) is IPv4-mapped of 127\.0\.0\.1 \(loopback\)"/,
      ],
    ] as const) {
      // Those of this event: the endpoints, subscribed to `*`, also get each other's
      // `webhook_delivery.failed`.
      const list = await eventually(
        async () => (await w.attempts(endpointId)).filter((a) => a.event_id === event._id),
        (a) => a.length === 2,
        "both attempts",
        SLOW,
      );
      for (const attempt of list) {
        expect(attempt.event_id).toBe(event._id);
        expect(attempt.succeeded).toBe(false);
        expect(attempt.error).toBe(ADDRESS_REFUSED);
        expect(attempt.error).not.toMatch(/127|::1|localhost/);
      }
      expect(worker.output()).toMatch(operatorLog);
    }
    expect(receiver.received).toHaveLength(0);
  });
});

describe.concurrent("delivery across workers: two workers on one database", () => {
  it("never make one attempt twice: each request the receiver got is one recorded attempt", async ({
    expect,
  }) => {
    const w = await world({ WEBHOOK_TIMEOUT_MS: "10000" });
    await Promise.all([w.worker(), w.worker()]);
    const receiver = await startReceiver();
    const endpointId = await w.endpoint(receiver.url);
    const events = [];
    for (let i = 0; i < 60; i++) events.push(await w.deployment.emit(w.workspaceId, "ticket.updated"));
    await eventually(
      async () => receiver.received.length,
      (n) => n >= events.length,
      "every delivery",
      SLOW,
    );
    // Let any duplicate arrive before counting.
    await new Promise((done) => setTimeout(done, 1000));
    const attempts = await w.attempts(endpointId);
    for (const event of events) {
      const recorded = attempts.filter((a) => a.event_id === event._id);
      expect(receiver.deliveriesOf(event._id)).toHaveLength(recorded.length);
      expect(recorded.filter((a) => a.succeeded)).toHaveLength(1);
    }
    // On an idle machine every first attempt succeeds: one request per event.
    expect(receiver.received.length).toBe(attempts.length);
  });
});

describe.concurrent("delivery across workers: a worker that dies", () => {
  it("SIGKILLed in the middle of an attempt: the delivery happens after a restart", async ({ expect }) => {
    // A 1 s timeout and a 4 s lease (WEBHOOK_LEASE_MS, rather than the default 1 s + 30 s: one
    // worker runs at a time here, so no live holder can lose its lane to another): the restarted
    // worker takes the lane and the delivery over once the lease has passed.
    const w = await world({ WEBHOOK_TIMEOUT_MS: "1000", WEBHOOK_LEASE_MS: "4000" });
    const first = await w.workerProcess();
    const receiver = await startReceiver();
    receiver.answer = (_d, index) => (index === 0 ? "hang" : { status: 200 });
    const endpointId = await w.endpoint(receiver.url);
    const event = await w.deployment.emit(w.workspaceId, "message.received");
    await eventually(
      async () => receiver.received.length,
      (n) => n >= 1,
      "the first attempt",
      SLOW,
    );
    first.child.kill("SIGKILL");
    await first.exited;
    receiver.release();
    await w.worker({ WEBHOOK_TIMEOUT_MS: "1000" });
    await eventually(
      async () => receiver.deliveriesOf(event._id).length,
      (n) => n >= 2,
      "redelivery",
      SLOW,
    );
    const attempts = await eventually(
      () => w.attempts(endpointId),
      (a) => a.some((x) => x.succeeded),
      "the recorded success",
      SLOW,
    );
    // By attempt number, not the list's order: the interrupted attempt is recorded late, by
    // the worker that takes the delivery over, and one CI run listed it as the newer of the two.
    const byNumber = [...attempts].sort((x, y) => x.attempt - y.attempt);
    expect(byNumber.map((a) => [a.attempt, a.succeeded, a.error?.split(":")[0] ?? null])).toEqual([
      [1, false, "interrupted"],
      [2, true, null],
    ]);
  });

  it("SIGTERMed during an attempt: lets it finish and record, then exits 0", async ({ expect }) => {
    const w = await world({ WEBHOOK_TIMEOUT_MS: "10000" });
    const worker = await w.workerProcess();
    const receiver = await startReceiver();
    receiver.answer = () => ({ status: 200, delayMs: 1500 });
    const endpointId = await w.endpoint(receiver.url);
    await w.deployment.emit(w.workspaceId, "conversation.assigned");
    await eventually(
      async () => receiver.received.length,
      (n) => n >= 1,
      "the attempt",
      SLOW,
    );
    worker.child.kill("SIGTERM");
    expect(await worker.exited).toBe(0);
    const attempts = await w.attempts(endpointId);
    expect(attempts.map((a) => [a.attempt, a.succeeded])).toEqual([[1, true]]);
    expect(receiver.received).toHaveLength(1);
  });
});
