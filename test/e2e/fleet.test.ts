// A fleet in one test: two ROLE=api and two ROLE=worker processes of the built
// server on one database, writes spread over both APIs through spec-checking proxies, one worker
// SIGKILLed in the middle of deliveries and one API SIGTERMed under load. Then: every write that
// was answered 2xx exists and has its event, every event reached the HTTPS receiver (verified by
// the verifier's middleware), and the shared rate limit held across the two APIs.
import { randomBytes } from "node:crypto";
import { eventually, type SpecProxy, sendJson, specScopes, startSpecProxy } from "@deskline/test-kit";
import { afterAll, describe, expect, inject, it } from "vitest";
import { startFleetDatabase } from "../helpers/fleet-database.js";
import { type ServerProcess, startBuiltServer } from "../helpers/server-process.js";
import { byEventId, startVerifiedReceiver, type VerifiedReceiver } from "../helpers/verified-receiver.js";

/** The shared limit of the writing key: the two APIs together may answer no more. */
const PER_SECOND = 2;
const BURST = 4;
/** How long the writers write, and the most requests they send (bounded in time and count). */
const WRITE_MS = 10_000;
const MAX_REQUESTS = 2_500;
const WRITERS = 8;
/**
 * A 2 s attempt timeout: an attempt the receiver holds is still in flight when the test, having
 * seen it held, kills its worker (at 1 s, on a busy machine, it had timed out first, and the
 * worker died holding nothing to interrupt).
 */
const WEBHOOK_TIMEOUT_MS = 2_000;
/**
 * The killed worker's leases expire 8 s after it last renewed them, rather than the default 1 s +
 * 30 s that the test sat out after the writing. It must exceed the timeout and the 2 s margin,
 * and leaves a live worker's renewal (after each batch) room on a busy machine, as in the
 * server's own takeover tests.
 */
const WEBHOOK_LEASE_MS = 8_000;
const DELIVERED_WITHIN_MS = 150_000;
/** The whole test: start-up, writing, the killed worker's leases expiring, the checks. */
const TEST_TIMEOUT_MS = 300_000;

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

interface Api {
  name: string;
  process: ServerProcess;
  proxy: SpecProxy;
  /** Whether the "load balancer" still sends it new requests. */
  routed: boolean;
}

async function call(baseUrl: string, token: string, method: string, path: string, body?: unknown) {
  const response = await sendJson(baseUrl, token, method, path, body);
  const text = await response.text();
  const retryAfter = Number(response.headers.get("retry-after") ?? 0);
  return { status: response.status, body: text ? JSON.parse(text) : undefined, retryAfter };
}

/** Two APIs behind spec-checking proxies and the first worker, on a database of their own. */
async function startFleet() {
  const database = await startFleetDatabase();
  cleanups.push(() => database.stop());
  const adminToken = `fleet-${randomBytes(8).toString("hex")}`;
  const env = {
    MONGODB_URI: database.uri,
    MONGODB_DATABASE: database.name,
    ADMIN_TOKEN: adminToken,
    NODE_EXTRA_CA_CERTS: inject("certFile"),
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    // Worker 1's attempts time out while the receiver holds them, until worker 2 has started
    // and worker 1 is killed: retries 2 s apart keep them from running out meanwhile (with
    // 50 ms apart, a start of more than 4 s on a busy machine used up all five).
    WEBHOOK_RETRY_DELAYS: "2s,2s,2s,2s",
    WEBHOOK_POLL_INTERVAL_MS: "50",
    WEBHOOK_TIMEOUT_MS: String(WEBHOOK_TIMEOUT_MS),
    WEBHOOK_LEASE_MS: String(WEBHOOK_LEASE_MS),
    EVENT_RELAY_INTERVAL_MS: "100",
    RATE_LIMIT_PER_SECOND: String(PER_SECOND),
    RATE_LIMIT_BURST: String(BURST),
  };
  const start = async (role: "api" | "worker") => {
    const process = await startBuiltServer({ ...env, ROLE: role });
    cleanups.push(() => process.stop());
    return process;
  };
  const apis: Api[] = await Promise.all(
    ["api-1", "api-2"].map(async (name) => {
      const process = await start("api");
      const proxy = await startSpecProxy(process.baseUrl);
      cleanups.push(() => proxy.close());
      return { name, process, proxy, routed: true };
    }),
  );
  // The second worker starts once the first was killed mid-delivery (in the test), so that the
  // one killed is known to hold deliveries.
  const worker1 = await start("worker");
  return { adminToken, apis, worker1, start };
}

/**
 * A workspace, a key that writes (rate-limited) and one that checks afterwards, an endpoint on a
 * receiver that holds what it is sent.
 */
async function setUpWorkspace(api1: Api, adminToken: string) {
  const admin = (method: string, path: string, body?: unknown) =>
    call(api1.proxy.url, adminToken, method, path, body);
  const workspace = (await admin("POST", "/admin/v1/workspaces", { name: "fleet" })).body;
  const newKey = async (name: string) =>
    (await admin("POST", `/admin/v1/workspaces/${workspace.id}/api-keys`, { name, scopes: specScopes })).body
      .key as string;
  const writeKey = await newKey("writer");
  const checkKey = await newKey("checker");
  const receiver = await startVerifiedReceiver({
    certFile: inject("certFile"),
    keyFile: inject("keyFile"),
  });
  cleanups.push(() => receiver.close());
  const endpoint = await call(api1.proxy.url, checkKey, "POST", "/open/v1/webhook-endpoints", {
    url: receiver.url,
    events: ["contact.created"],
  });
  expect(endpoint.status).toBe(201);
  receiver.useSecret(endpoint.body.secret);
  receiver.delayMs = 50;
  receiver.hold = true;
  return { writeKey, checkKey, receiver, endpointId: endpoint.body.id as string };
}

/** What the writers sent and were answered; `done` settles when they stop. */
interface Load {
  written: { id: string; via: string }[];
  /** "api-1 201" → how many. */
  statuses: Map<string, number>;
  sent: number;
  started: number;
  lastAnswer: number;
  done: Promise<unknown>;
}

/** The writers: round robin over the APIs the "load balancer" still routes to. */
function startWriters(apis: Api[], writeKey: string): Load {
  const started = performance.now();
  const load: Load = {
    written: [],
    statuses: new Map(),
    sent: 0,
    started,
    lastAnswer: started,
    done: Promise.resolve(),
  };
  let turn = 0;
  const writer = async () => {
    while (performance.now() - started < WRITE_MS && load.sent < MAX_REQUESTS) {
      const routed = apis.filter((a) => a.routed);
      const api = routed[turn++ % routed.length] as Api;
      const n = load.sent++;
      const answer = await call(api.proxy.url, writeKey, "POST", "/open/v1/contacts", {
        name: `Fleet ${n}`,
        email: `fleet-${n}@example.com`,
      });
      load.lastAnswer = performance.now();
      const label = `${api.name} ${answer.status}`;
      load.statuses.set(label, (load.statuses.get(label) ?? 0) + 1);
      if (answer.status === 201) load.written.push({ id: answer.body.id, via: api.name });
      else if (answer.status === 429) await new Promise((done) => setTimeout(done, 10));
    }
  };
  load.done = Promise.all(Array.from({ length: WRITERS }, writer));
  return load;
}

/** What the writers were answered, once they stopped. */
function expectRateLimitHeld({ written, statuses, sent, started, lastAnswer }: Load, apis: Api[]): void {
  // The shared rate limit held: the two APIs together answered no more 201s than one bucket
  // of BURST refilled at PER_SECOND gives over the writing time, and the load went past it.
  const summary = JSON.stringify({ written: written.length, sent, statuses: [...statuses] });
  const limit = BURST + (PER_SECOND * (lastAnswer - started)) / 1000;
  expect(written.length, summary).toBeLessThanOrEqual(limit * 1.1);
  expect(written.length, summary).toBeGreaterThan(BURST);
  expect([...statuses.keys()].filter((s) => s.endsWith(" 429")).length, summary).toBeGreaterThan(0);
  // Writes spread over both APIs.
  for (const api of apis)
    expect(written.filter((w) => w.via === api.name).length, summary).toBeGreaterThan(0);
  // Nothing but 201 and 429 was answered, except that the stopped API's proxy may have met its
  // closed port (502, no answer from the server: no write cut off that way had been acknowledged).
  for (const label of statuses.keys()) expect(label, summary).toMatch(/ (201|429)$|^api-2 502$/);
}

/**
 * Every item of a list, page after page. The checks have a key of their own, under the same
 * limit: they wait when it says so.
 */
async function listAll(baseUrl: string, key: string, path: string) {
  const check = async (url: string) => {
    for (;;) {
      const answer = await call(baseUrl, key, "GET", url);
      if (answer.status !== 429) return answer;
      await new Promise((done) => setTimeout(done, answer.retryAfter * 1000));
    }
  };
  const items: any[] = [];
  for (;;) {
    const after = items.length ? `&starting_after=${items.at(-1).id}` : "";
    const page = await check(`${path}${path.includes("?") ? "&" : "?"}limit=100${after}`);
    expect(page.status).toBe(200);
    items.push(...page.body.data);
    if (!page.body.has_more) return items;
  }
}

/**
 * No write lost: each one answered 201 exists and has its contact.created event. Returns
 * contact id → event id.
 */
async function expectNoWriteLost(written: Load["written"], list: (path: string) => Promise<any[]>) {
  const contacts = new Set((await list("/open/v1/contacts")).map((c) => c.id));
  expect(written.filter((w) => !contacts.has(w.id))).toEqual([]);
  // contact id → event id
  const events = new Map<string, string>(
    (await list("/open/v1/events?type=contact.created")).map((e) => [e.data.id, e.id]),
  );
  expect(written.filter((w) => !events.has(w.id))).toEqual([]);
  return events;
}

/**
 * Every event delivered, verified, each with the payload the events API holds; the killed
 * worker's deliveries were taken over once its leases expired.
 */
async function expectEveryEventDelivered(
  receiver: VerifiedReceiver,
  events: Map<string, string>,
  worker2: ServerProcess,
): Promise<void> {
  await eventually(
    async () => {
      const got = byEventId(receiver.verified);
      const missing = [...events.values()].filter((id) => !got.has(id));
      return {
        missing,
        verified: receiver.verified.length,
        refused: receiver.refused,
        held: receiver.held,
      };
    },
    (state) => state.missing.length === 0,
    `all ${events.size} events delivered`,
    DELIVERED_WITHIN_MS,
  ).catch((error: Error) => {
    // What the surviving worker logged is what explains a delivery that never came.
    throw new Error(
      `${error.message}\nworker 2 (${worker2.exitCode() ?? "running"}): ${worker2.log().slice(-4000)}`,
    );
  });
  const delivered = byEventId(receiver.verified);
  for (const [contactId, eventId] of events) {
    expect(delivered.get(eventId)?.event.data).toMatchObject({ id: contactId, object: "contact" });
  }
  expect(receiver.refused).toBe(0);
}

describe("a fleet: two APIs and two workers on one database", () => {
  it(
    "loses no write and no event through a SIGKILLed worker and a SIGTERMed API, under one rate limit",
    async () => {
      const { adminToken, apis, worker1, start } = await startFleet();
      const [api1, api2] = apis as [Api, Api];
      const { writeKey, checkKey, receiver, endpointId } = await setUpWorkspace(api1, adminToken);
      const load = startWriters(apis, writeKey);

      // Worker 1 is mid-delivery (the receiver holds what it sent) and is SIGKILLed at once, with
      // those deliveries unanswered; then the second worker joins. Killed after the second
      // worker's start instead, it could outlive its held attempts (a 1 s timeout against a
      // start of seconds on a busy machine) and die holding none.
      await eventually(
        async () => receiver.held,
        (held) => held > 0,
        "worker 1 mid-delivery",
        90_000,
      );
      expect(await worker1.kill("SIGKILL")).toBeNull();
      receiver.hold = false;
      const worker2 = await start("worker");

      // Under load, the second API is stopped: it is taken out of the rotation, as a load
      // balancer does on SIGTERM, and its requests in flight are finished before it exits 0.
      await new Promise((done) =>
        setTimeout(done, Math.max(0, WRITE_MS / 2 - (performance.now() - load.started))),
      );
      api2.routed = false;
      expect(await api2.process.kill("SIGTERM")).toBe(0);
      await load.done;

      expectRateLimitHeld(load, apis);
      const list = (path: string) => listAll(api1.proxy.url, checkKey, path);
      const events = await expectNoWriteLost(load.written, list);
      await expectEveryEventDelivered(receiver, events, worker2);
      const attempts = await list(`/open/v1/webhook-endpoints/${endpointId}/attempts`);
      expect(attempts.some((a) => String(a.error).startsWith("interrupted"))).toBe(true);

      // The surviving processes are healthy; every answer any proxy saw matched the spec.
      const workerProxy = await startSpecProxy(worker2.baseUrl);
      cleanups.push(() => workerProxy.close());
      for (const proxy of [api1.proxy, workerProxy]) {
        expect((await call(proxy.url, "", "GET", "/readyz")).status).toBe(200);
      }
      for (const proxy of [api1.proxy, workerProxy]) expect(proxy.problems()).toEqual([]);
      // The stopped API's proxy: only requests that met its closed port (status 0) are not answers.
      expect(api2.proxy.problems().filter((e) => e.status !== 0)).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );
});
