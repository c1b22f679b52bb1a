import { type Db, MongoClient } from "mongodb";
import { expect, inject } from "vitest";
import { loadConfig } from "../../src/config.js";
import { type EventType, newEvent, type StoredEvent } from "../../src/events/model.js";
import { pushEvent } from "../../src/events/outbox-relay.js";
import { newId } from "../../src/platform/ids.js";
import { api } from "./api.js";
import { TEST_DELIVERY_ENV } from "./delivery-env.js";
import { scopeEnd } from "./file-end.js";
import { testCertificate } from "./https-receiver.js";
import { type InProcessServer, startInProcess } from "./in-process.js";
import { type MainProcess, startMain } from "./main-process.js";

/**
 * A delivery deployment for one test: its own database on the run's database server (so its
 * workers take no other test's jobs), servers with a ROLE each, with millisecond retry delays,
 * trusting the test receivers' certificate; and `emit`, which records events the way the API's
 * writes do (a document carrying them, moved by the relay, whose hook queues their deliveries)
 * for event types no public write makes yet.
 *
 * `start` runs a server in the test's own process (`startServer`, the composition main runs):
 * several workers are several servers over one database, as svix-server's tests run theirs.
 * `startProcess` runs `src/main.ts` as a child, for what only a process shows (a SIGKILL in the
 * middle of an attempt, SIGTERM's graceful stop).
 */

export { TEST_DELIVERY_ENV } from "./delivery-env.js";
export type { InProcessServer } from "./in-process.js";

type Role = "all" | "api" | "worker";

export interface Deployment {
  databaseName: string;
  mongodbUri: string;
  db: Db;
  /** Starts one more server on this deployment's database, in this process. */
  start(role: Role, env?: Record<string, string>): Promise<InProcessServer>;
  /**
   * Starts one more server process (`src/main.ts`) on this deployment's database; `args`: node's
   * (MAIN unless given, e.g. with a preload before it).
   */
  startProcess(role: Role, env?: Record<string, string>, args?: string[]): Promise<MainProcess>;
  /** Records an event of `type` in `workspaceId` and relays it, queueing its deliveries. */
  emit(workspaceId: string, type: EventType, data?: Record<string, unknown>): Promise<StoredEvent>;
  /**
   * Relays `event` once more, as a relay does that finds it still pending (the sweep racing a
   * slow writer, or a writer that crashed after running the hooks): the hooks run again.
   */
  relayAgain(event: StoredEvent): Promise<void>;
}

const DATA_OF: Record<EventType, (id: string) => Record<string, unknown>> = {
  "contact.created": (id) => ({ id, object: "contact", name: "Ada" }),
  "contact.updated": (id) => ({ id, object: "contact", name: "Ada L." }),
  "contact.erased": (id) => ({ id, object: "contact", erased: true, erased_at: new Date().toISOString() }),
  "ticket.created": (id) => ({ id, object: "ticket", subject: "Printer on fire" }),
  "ticket.updated": (id) => ({ id, object: "ticket", status: "Solved" }),
  "message.received": (id) => ({ id, object: "message", body: "Hello ✓ — ünïcödé" }),
  "conversation.assigned": (id) => ({ id, object: "conversation", assignee_ids: ["agent_1"] }),
  "webhook_endpoint.failing": (id) => ({ id, object: "webhook_endpoint", consecutive_failures: 5 }),
  "webhook_endpoint.disabled": (id) => ({ id, object: "webhook_endpoint", reason: "owner" }),
  "webhook_endpoint.recovered": (id) => ({ id, object: "webhook_endpoint", consecutive_failures: 0 }),
  "webhook_delivery.failed": (id) => ({ id, object: "webhook_delivery", status: "failed" }),
};

export async function startDeployment(
  env: Record<string, string> = {},
  /** Another database server than the run's (e.g. mongo-java-server with its oplog, for change streams). */
  options: { mongodbUri?: string } = {},
): Promise<Deployment> {
  const databaseName = `deskline_delivery_${newId("req")}`;
  const mongodbUri = options.mongodbUri ?? inject("mongodbUri");
  // What the deployment itself holds ends with the test (or file) that made it; its servers end
  // with the test that starts each.
  const atEnd = scopeEnd();
  const client = await new MongoClient(mongodbUri).connect();
  atEnd(() => client.close());
  const db = client.db(databaseName);
  const envOf = (role: Role, extra: Record<string, string>) => ({
    MONGODB_URI: mongodbUri,
    MONGODB_DATABASE: databaseName,
    ADMIN_TOKEN: inject("adminToken"),
    ROLE: role,
    ...TEST_DELIVERY_ENV,
    ...env,
    ...extra,
  });
  // The relay of `emit`: an API server's, whose hook queues deliveries exactly as the API's writes do.
  let emitter: Promise<InProcessServer> | undefined;
  const relay = async () => {
    emitter ??= startInProcess(loadConfig(envOf("api", {})), atEnd);
    return (await emitter).server.store.relay;
  };
  const outbox = db.collection<{ _id: string; pending_events?: StoredEvent[] }>("test_outbox");
  return {
    databaseName,
    mongodbUri,
    db,
    start: (role, extra = {}) => startInProcess(loadConfig(envOf(role, extra))),
    async startProcess(role, extra = {}, args) {
      const main = startMain(
        { NODE_EXTRA_CA_CERTS: testCertificate().certFile, ...envOf(role, extra) },
        args,
      );
      if (role !== "worker") await main.ready();
      if (role !== "api") await main.logged(/delivering webhooks/);
      return main;
    },
    async emit(workspaceId, type, data) {
      const id = newId("con");
      const event = newEvent(workspaceId, type, data ?? DATA_OF[type](id));
      await outbox.insertOne({ _id: id, ...({} as object) });
      await outbox.updateOne({ _id: id }, pushEvent(event));
      await (await relay()).drain("test_outbox", id);
      return event;
    },
    async relayAgain(event) {
      const id = newId("con");
      await outbox.insertOne({ _id: id, pending_events: [event] });
      await (await relay()).drain("test_outbox", id);
    },
  };
}

/**
 * The base URL of a ROLE=all server (in this process) that delivers one lane and one attempt at a time
 * (WEBHOOK_CONCURRENCY and WEBHOOK_ENDPOINT_CONCURRENCY 1, a 3 s timeout): what the client tests
 * (the CLI's and the SDK's) drive on a shared machine.
 */
export async function startOneAtATime(): Promise<string> {
  const deployment = await startDeployment({
    WEBHOOK_CONCURRENCY: "1",
    WEBHOOK_ENDPOINT_CONCURRENCY: "1",
    WEBHOOK_TIMEOUT_MS: "3000",
  });
  return (await deployment.start("all")).baseUrl;
}

/** Registers an endpoint for `url` with the workspace's key on the server at `baseUrl`; 201 or the test fails. */
export async function createEndpoint(
  { key, baseUrl }: { key: string; baseUrl: string },
  url: string,
  events: string[] = ["*"],
): Promise<{ id: string; secret: string }> {
  const created = await api.post("/open/v1/webhook-endpoints", { key, baseUrl, body: { url, events } });
  expect(created.status).toBe(201);
  return created.body as { id: string; secret: string };
}
