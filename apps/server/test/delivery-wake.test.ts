import { constructEvent } from "@deskline/webhook-verifier";
import { afterAll, describe, expect, it, vi } from "vitest";
import { type JavaMongoServer, startMongoJavaServer } from "../src/platform/database/mongo-java-server.js";
import { api, newWorkspace } from "./helpers/api.js";
import { createEndpoint, type InProcessServer, startDeployment } from "./helpers/delivery.js";
import { startReceiver } from "./helpers/https-receiver.js";
import { eventually } from "./helpers/main-process.js";

// Workers woken by the write: a delivery an API server queues reaches an idle worker, another
// server that shares no memory with it (both in this process), on either path a worker can hear it by: its quick poll for due deliveries (the run's
// database, mongo-java-server without change streams) or a change stream on the deliveries (a
// mongo-java-server started with its oplog). The regular poll is set to a minute, so it cannot
// explain a delivery within the deadline; the deadline is generous for a loaded machine.

vi.setConfig({ testTimeout: 120_000 });

/** Far shorter than the regular poll in these tests (a minute), far longer than a wake needs. */
const DEADLINE_MS = 15_000;
const REGULAR_POLL_MS = "60000";

const started: InProcessServer[] = [];
let withOplog: Promise<JavaMongoServer> | undefined;
/** One mongo-java-server with its oplog (so with change streams) for the file's tests. */
const oplogServer = () => {
  withOplog ??= startMongoJavaServer({ oplog: true });
  return withOplog;
};
afterAll(async () => {
  if (process.env.DEBUG_DELIVERY) for (const m of started) console.log(m.output().slice(-3000));
  await Promise.all(started.map((m) => m.stop(1_000)));
  await (await withOplog)?.stop();
});

/**
 * An API server and a worker on one database; a contact created through the API must reach the
 * receiver, signed, before the deadline. Returns the worker, whose log tells the path it took.
 */
async function contactReachesIdleWorker(env: Record<string, string>, mongodbUri?: string) {
  const deployment = await startDeployment(
    { WEBHOOK_POLL_INTERVAL_MS: REGULAR_POLL_MS, ...env },
    { mongodbUri },
  );
  const apiProcess = await deployment.start("api");
  const worker = await deployment.start("worker");
  started.push(apiProcess, worker);
  const baseUrl = await apiProcess.baseUrl;
  const { key } = await newWorkspace(undefined, baseUrl);
  const receiver = await startReceiver();
  const endpoint = await createEndpoint({ key, baseUrl }, receiver.url, ["contact.created"]);
  // The worker's first queue filling (at its start) is over and its next poll is a minute away.
  const created = await api.post("/open/v1/contacts", { key, baseUrl, body: { name: "Ada Woken" } });
  expect(created.status).toBe(201);
  const [delivery] = await eventually(
    async () => receiver.received,
    (received) => received.length >= 1,
    "the delivery of contact.created",
    DEADLINE_MS,
  );
  if (!delivery) throw new Error("no delivery");
  const event = constructEvent(
    delivery.body,
    delivery.headers["service-signature"] as string,
    endpoint.secret,
  );
  expect(event.type).toBe("contact.created");
  expect((event.data as { id: string }).id).toBe(created.body.id);
  return worker;
}

/**
 * A graceful stop (what SIGTERM runs; webhook-workers.test.ts sends the signal itself): the wake
 * source stops (stream closed, polls ended) before the database closes, so nothing logs an error.
 */
async function stopsCleanly(worker: InProcessServer): Promise<void> {
  await worker.stop();
  expect(worker.output()).not.toMatch(
    /"level":(40|50|60)[^\n]*(wake change stream|agenda error|dispatch round)/,
  );
}

describe("a worker beside the API, sharing only the database", () => {
  it("without change streams, polls for due deliveries and delivers a write at once", async () => {
    const worker = await contactReachesIdleWorker({});
    // In words, and on the embedded fallback without the refusal's "Unknown error" beside it.
    expect(worker.output()).toMatch(
      /webhook wake: looking for due deliveries every 20 ms \(this database has no change streams(; the server answered code \d+: [^)]*)?\)/,
    );
    expect(worker.output()).not.toContain("$changeStream");
    await stopsCleanly(worker);
  });

  it("with change streams, hears of the delivery through one and delivers a write at once", async () => {
    const server = await oplogServer();
    // A poll would come every 10 minutes: only the stream can explain the delivery.
    const worker = await contactReachesIdleWorker({ WEBHOOK_WAKE_INTERVAL_MS: "600000" }, server.uri);
    expect(worker.output()).toContain("webhook wake: change stream on webhook_deliveries");
    expect(worker.output()).not.toContain("looking for due deliveries every");
    await stopsCleanly(worker);
  });
});
