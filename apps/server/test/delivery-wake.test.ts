import { constructEvent } from "@deskline/webhook-verifier";
import { MongoClient } from "mongodb";
import { pino } from "pino";
import { afterAll, describe, expect, inject, it, vi } from "vitest";
import { DeliveryBell } from "../src/db/delivery-bell.js";
import { type JavaMongoServer, startMongoJavaServer } from "../src/db/mongo-java-server.js";
import { listenToDeliveryBell } from "../src/delivery/wake.js";
import { newId } from "../src/domain/ids.js";
import { createLogger } from "../src/logger.js";
import { api, newWorkspace } from "./helpers/api.js";
import { createEndpoint, startDeployment } from "./helpers/delivery.js";
import { startReceiver } from "./helpers/https-receiver.js";
import { eventually, type MainProcess } from "./helpers/main-process.js";
import { createTcpProxy } from "./helpers/tcp-proxy.js";

// Workers woken by the write (issue 25): a job an API process creates reaches an idle worker in
// another process through the delivery bell, on either path a worker can hear it by: reading the
// bell (the run's database, mongo-java-server without change streams) or a change stream (a
// mongo-java-server started with its oplog). Agenda's poll is set to a minute, so it cannot
// explain a delivery within the deadline; the deadline is generous for a loaded machine.

vi.setConfig({ testTimeout: 120_000 });

/** Far shorter than Agenda's poll in these tests (a minute), far longer than a wake needs. */
const DEADLINE_MS = 15_000;
const AGENDA_POLL_MS = "60000";

const started: MainProcess[] = [];
let withOplog: Promise<JavaMongoServer> | undefined;
/** One mongo-java-server with its oplog (so with change streams) for the file's tests. */
const oplogServer = () => {
  withOplog ??= startMongoJavaServer({ oplog: true });
  return withOplog;
};
afterAll(async () => {
  if (process.env.DEBUG_DELIVERY) for (const m of started) console.log(m.output().slice(-3000));
  for (const m of started) if (m.child.exitCode === null) m.child.kill("SIGKILL");
  await Promise.all(started.map((m) => m.exited));
  await (await withOplog)?.stop();
});

/**
 * An API and a worker process on one database; a contact created through the API must reach the
 * receiver, signed, before the deadline. Returns the worker, whose log tells the path it took.
 */
async function contactReachesIdleWorker(env: Record<string, string>, mongodbUri?: string) {
  const deployment = await startDeployment(
    { WEBHOOK_POLL_INTERVAL_MS: AGENDA_POLL_MS, ...env },
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

/** SIGTERM: the wake stops (stream closed, reads ended) before the database closes; exit 0. */
async function stopsCleanly(worker: MainProcess): Promise<void> {
  worker.child.kill("SIGTERM");
  expect(await worker.exited).toBe(0);
  // (Other warnings at shutdown are not the wake's: the relay sweep's stop does not wait for it.)
  expect(worker.output()).not.toMatch(/"level":(40|50|60)[^\n]*delivery wake/);
}

describe("a worker in another process than the API", () => {
  it("without change streams, reads the bell and delivers a write at once", async () => {
    const worker = await contactReachesIdleWorker({});
    expect(worker.output()).toMatch(/delivery wake: polling delivery_bell every 20 ms \(no change streams: /);
    await stopsCleanly(worker);
  });

  it("with change streams, hears the bell through one and delivers a write at once", async () => {
    const server = await oplogServer();
    // The bell is read every 10 minutes: only the stream can explain the delivery.
    const worker = await contactReachesIdleWorker({ WEBHOOK_WAKE_INTERVAL_MS: "600000" }, server.uri);
    expect(worker.output()).toContain("delivery wake: change stream on delivery_bell");
    expect(worker.output()).not.toContain("polling delivery_bell");
    await stopsCleanly(worker);
  });
});

describe("a worker's change stream that fails", () => {
  it("falls back to reading the bell, and opens a stream again once it can", async () => {
    const server = await oplogServer();
    const proxy = await createTcpProxy(server.uri);
    await proxy.open();
    // The worker's side goes through the proxy, cut below; the writer's side does not.
    const worker = await new MongoClient(`${proxy.uri}&serverSelectionTimeoutMS=500`).connect();
    const writer = await new MongoClient(server.uri).connect();
    const databaseName = `deskline_wake_${newId("req")}`;
    const logged: string[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => void logged.push(line) });
    const ringer = new DeliveryBell(writer.db(databaseName), logger);
    await ringer.ensureDocument();
    let heard = 0;
    const wake = await listenToDeliveryBell({
      bell: new DeliveryBell(worker.db(databaseName), logger),
      onRing: () => heard++,
      intervalMs: 20,
      logger,
      streamRetryMs: 500,
    });
    /** Rings, and waits until the listener heard a ring after it. */
    const ringHeard = async (what: string) => {
      const before = heard;
      await ringer.ring();
      await eventually(
        async () => heard,
        (n) => n > before,
        what,
        DEADLINE_MS,
      );
    };
    const hasLogged = (pattern: RegExp) =>
      eventually(
        async () => logged.filter((line) => pattern.test(line)),
        (l) => l.length > 0,
        `${pattern}`,
        DEADLINE_MS,
      );
    try {
      await hasLogged(/"delivery wake: change stream on delivery_bell"/);
      await ringHeard("a ring through the stream");
      await proxy.cut();
      await hasLogged(/delivery wake: the change stream failed; polling delivery_bell/);
      await proxy.open();
      await ringHeard("a ring read from the bell, or through a new stream");
      await hasLogged(/delivery wake: change stream on delivery_bell again/);
      await ringHeard("a ring through the new stream");
    } finally {
      await wake.stop();
      await worker.close();
      await writer.close();
      await proxy.cut();
    }
  });
});

describe("the delivery bell", () => {
  const client = new MongoClient(inject("mongodbUri"));
  afterAll(() => client.close());

  /** A bell in a database of its own: its counter counts this test's rings only, one per write. */
  async function newBell(): Promise<DeliveryBell> {
    const bell = new DeliveryBell(client.db(`deskline_bell_${newId("req")}`), createLogger("silent"));
    await bell.ensureDocument();
    return bell;
  }

  it("rings a burst of 100 concurrent calls with two writes: the one in flight and one after", async () => {
    const bell = await newBell();
    await Promise.all(Array.from({ length: 100 }, () => bell.ring()));
    expect(await bell.rings()).toBe(2);
  });

  it("always rings after the last call: the counter moves past what was read before it", async () => {
    const bell = await newBell();
    const calls: Promise<void>[] = [];
    for (let i = 0; i < 50; i++) {
      calls.push(bell.ring());
      await new Promise((done) => setImmediate(done));
    }
    const seen = await bell.rings();
    await bell.ring();
    expect(await bell.rings()).toBeGreaterThan(seen);
    await Promise.all(calls);
    // Calls made while a ring was in flight shared the ring after it.
    expect(await bell.rings()).toBeLessThan(51);
  });
});
