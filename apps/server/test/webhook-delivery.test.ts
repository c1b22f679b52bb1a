import { writeFileSync } from "node:fs";
import { constructEvent, verifySignature } from "@deskline/webhook-verifier";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { EVENT_TYPES, type EventType } from "../src/events/model.js";
import { admin, api, newWorkspace } from "./helpers/api.js";
import {
  createEndpoint,
  type Deployment,
  type InProcessServer,
  startDeployment,
} from "./helpers/delivery.js";
import { type Answer, type Receiver, startReceiver } from "./helpers/https-receiver.js";
import { eventually } from "./helpers/main-process.js";

// Webhook delivery end to end: a real server (ROLE=all, in this process) delivers over real
// HTTPS to receivers this file starts on 127.0.0.1, trusting their certificate, with
// retry delays of 50 ms and a 3 s timeout.

// Deliveries share two cores with everything else running; waits are generous, never timed.
const SLOW = 90_000;
// Long enough that TLS handshakes on a busy machine do not time out, short enough for the test.
const TIMEOUT_MS = 3000;
/** The timeout test's: any attempt times out there, as the receiver answers long after it. */
const SHORT_TIMEOUT_MS = 500;
vi.setConfig({ testTimeout: 180_000 });

interface Server {
  deployment: Deployment;
  main: InProcessServer;
}

/** A deployment of its own with a server (ROLE=all) whose attempts time out after `timeoutMs`. */
async function startServer(timeoutMs: number): Promise<Server> {
  const deployment = await startDeployment({ WEBHOOK_TIMEOUT_MS: String(timeoutMs) });
  return { deployment, main: await deployment.start("all") };
}

/** The server most tests share, each in a workspace of its own. */
let shared: Server;
beforeAll(async () => {
  shared = await startServer(TIMEOUT_MS);
});
afterAll(() => {
  if (process.env.DEBUG_DELIVERY) writeFileSync("/tmp/delivery-debug.log", shared.main.output());
});

/**
 * A workspace of its own on `server` (the shared one unless given), so no endpoint of another
 * test receives its events, and what the tests do with it.
 */
async function workspace(server: Server = shared) {
  const { deployment } = server;
  const { baseUrl } = server.main;
  const { key, workspaceId } = await newWorkspace(undefined, baseUrl);
  const attemptsOf = async (endpointId: string) => {
    const page = await api.get(`/open/v1/webhook-endpoints/${endpointId}/attempts?limit=100`, {
      key,
      baseUrl,
    });
    expect(page.status).toBe(200);
    return page.body.data as Array<{
      event_id: string;
      attempt: number;
      status_code: number | null;
      error: string | null;
      succeeded: boolean;
      duration_ms: number;
    }>;
  };
  return {
    deployment,
    baseUrl,
    key,
    workspaceId,
    /** Records an event of `type` in this workspace, queueing its deliveries. */
    emit: (type: EventType) => deployment.emit(workspaceId, type),
    /** The admin API of this workspace's server. */
    adminAt: (method: string, path: string) => admin(method, path, undefined, baseUrl),
    endpointFor: (url: string, events?: string[]) => createEndpoint({ key, baseUrl }, url, events),
    attemptsOf,
    getEndpoint: async (id: string) =>
      (await api.get(`/open/v1/webhook-endpoints/${id}`, { key, baseUrl })).body,
    /** Waits until the endpoint's attempts for `eventId` settle: a success or `count` attempts. */
    settled: (endpointId: string, eventId: string, count: number) =>
      eventually(
        async () => (await attemptsOf(endpointId)).filter((a) => a.event_id === eventId),
        (attempts) => attempts.length >= count,
        `${count} attempts for ${eventId}`,
        SLOW,
      ),
  };
}
type Workspace = Awaited<ReturnType<typeof workspace>>;

/** Waits until `receiver` has `count` requests for `eventId`. */
const delivered = (receiver: Receiver, eventId: string, count = 1) =>
  eventually(
    async () => receiver.deliveriesOf(eventId).length,
    (n) => n >= count,
    `${count} deliveries of ${eventId}`,
    SLOW,
  );

/**
 * Makes the receiver give `answer` to every attempt of one event's delivery in `w`: five
 * attempts, each failed with `error` and `status`, then one failed delivery (the endpoint's
 * failure count 1).
 */
async function expectFiveFailedAttempts(
  w: Workspace,
  answer: Exclude<Answer, "hang">,
  error: string,
  status: number | null,
) {
  const receiver = await startReceiver();
  receiver.answer = () => ({ ...answer });
  const endpoint = await w.endpointFor(receiver.url);
  const event = await w.emit("contact.updated");
  const attempts = await w.settled(endpoint.id, event._id, 5);
  await eventually(
    () => w.getEndpoint(endpoint.id),
    (e) => e.consecutive_failures === 1,
    "the failure count",
    SLOW,
  );
  expect(attempts.map((a) => [a.attempt, a.status_code, a.error, a.succeeded])).toEqual(
    [5, 4, 3, 2, 1].map((n) => [n, status, error, false]),
  );
  // Redirects are not followed: only the endpoint's own path was ever asked.
  expect(receiver.received.every((r) => r.headers["service-delivery"] === event._id)).toBe(true);
  expect(receiver.received).toHaveLength(5);
}

// Each test has a workspace, endpoints and receivers of its own, on the shared server (whose
// settings no test changes) or on one of its own: they run at once, within each block and across
// these sibling concurrent blocks.
describe.concurrent("webhook delivery: every event type, once", () => {
  it("delivers every event type, the stored bytes, signed for the verifier and for standard-webhooks", async ({
    expect,
  }) => {
    const w = await workspace();
    const receiver = await startReceiver();
    const endpoint = await w.endpointFor(receiver.url);
    for (const type of EVENT_TYPES) {
      const event = await w.emit(type);
      await delivered(receiver, event._id);
      const [delivery] = receiver.deliveriesOf(event._id);
      if (!delivery) throw new Error("no delivery");
      expect(delivery.body.toString("utf8")).toBe(event.payload);
      expect(delivery.headers["content-type"]).toBe("application/json");
      expect(delivery.headers["service-event"]).toBe(type);
      expect(delivery.headers["user-agent"]).toMatch(/^Deskline-Webhooks\/\d+\.\d+\.\d+$/);
      const parsed = constructEvent(
        delivery.body,
        delivery.headers["service-signature"] as string,
        endpoint.secret,
      );
      expect(parsed.id).toBe(event._id);
      expect(parsed.type).toBe(type);
      const standard = new Webhook(endpoint.secret).verify(delivery.body.toString("utf8"), {
        "webhook-id": delivery.headers["webhook-id"] as string,
        "webhook-timestamp": delivery.headers["webhook-timestamp"] as string,
        "webhook-signature": delivery.headers["webhook-signature"] as string,
      });
      expect(standard).toEqual(JSON.parse(event.payload));
      expect(delivery.headers["webhook-id"]).toBe(event._id);
    }
    const attempts = await w.attemptsOf(endpoint.id);
    expect(attempts).toHaveLength(EVENT_TYPES.length);
    expect(attempts.every((a) => a.succeeded && a.status_code === 200 && a.attempt === 1)).toBe(true);
    expect((await w.getEndpoint(endpoint.id)).consecutive_failures).toBe(0);
  });

  it("does not deliver again when the relay runs its hook again after the delivery finished", async ({
    expect,
  }) => {
    const w = await workspace();
    const receiver = await startReceiver();
    const endpoint = await w.endpointFor(receiver.url);
    const settled = (eventId: string) =>
      eventually(
        () => w.deployment.db.collection("webhook_deliveries").find({ event_id: eventId }).toArray(),
        (list) => list.length === 1 && list[0]?.status === "succeeded",
        `the delivery of ${eventId} to settle`,
        SLOW,
      );
    const event = await w.emit("contact.created");
    await delivered(receiver, event._id);
    await settled(event._id);
    // The relay runs the event's hooks again (a writer that died before removing its pending
    // copy): the delivery is recorded under the same id, so nothing is queued or sent twice.
    await w.deployment.relayAgain(event);
    await settled(event._id);
    // Give a wrongly queued second delivery the time to arrive.
    await new Promise((done) => setTimeout(done, 500));
    expect(receiver.deliveriesOf(event._id)).toHaveLength(1);
    const attempts = (await w.attemptsOf(endpoint.id)).filter((a) => a.event_id === event._id);
    expect(attempts.map((a) => [a.attempt, a.succeeded])).toEqual([[1, true]]);
  });
});

describe.concurrent("webhook delivery: the API's writes, and subscriptions", () => {
  it("delivers what the API's writes record: a contact created and updated, a ticket created", async ({
    expect,
  }) => {
    const w = await workspace();
    const { key, baseUrl } = w;
    const receiver = await startReceiver();
    const endpoint = await w.endpointFor(receiver.url);
    const contact = await api.post("/open/v1/contacts", { key, baseUrl, body: { name: "Ada" } });
    expect(contact.status).toBe(201);
    const patched = await api.patch(`/open/v1/contacts/${contact.body.id}`, {
      key,
      baseUrl,
      body: { name: "Ada Lovelace" },
    });
    expect(patched.status).toBe(200);
    const ticket = await api.post("/open/v1/tickets", { key, baseUrl, body: { subject: "Printer on fire" } });
    expect(ticket.status).toBe(201);
    await eventually(
      async () => receiver.received.length,
      (n) => n >= 3,
      "three deliveries",
      SLOW,
    );
    const bodies = receiver.received.map((r) =>
      constructEvent(r.body, r.headers["service-signature"] as string, endpoint.secret),
    );
    expect(bodies.map((e) => [e.type, (e.data as { id: string }).id]).sort()).toEqual(
      [
        ["contact.created", contact.body.id],
        ["contact.updated", contact.body.id],
        ["ticket.created", ticket.body.id],
      ].sort(),
    );
    // The delivered body is the event the events API serves, byte for byte.
    for (const delivery of receiver.received) {
      const id = delivery.headers["service-delivery"] as string;
      const stored = await api.get(`/open/v1/events/${id}`, { key, baseUrl });
      expect(JSON.parse(delivery.body.toString())).toEqual(stored.body);
    }
  });

  it("delivers only the types an endpoint subscribes to", async ({ expect }) => {
    const w = await workspace();
    const receiver = await startReceiver();
    const everything = await startReceiver();
    await w.endpointFor(receiver.url, ["contact.created", "ticket.updated"]);
    await w.endpointFor(everything.url);
    const sent = [];
    for (const type of [
      "contact.created",
      "contact.updated",
      "ticket.updated",
      "message.received",
    ] as const) {
      sent.push(await w.emit(type));
    }
    for (const event of sent) await delivered(everything, event._id);
    await eventually(
      async () => receiver.received.length,
      (n) => n >= 2,
      "the subscribed deliveries",
      SLOW,
    );
    expect(receiver.received.map((r) => r.headers["service-event"]).sort()).toEqual([
      "contact.created",
      "ticket.updated",
    ]);
  });
});

describe.concurrent("webhook delivery: retries, failed attempts and timeouts", () => {
  it("retries a failing endpoint with the same event id, signed anew, until it succeeds", async ({
    expect,
  }) => {
    const w = await workspace();
    const receiver = await startReceiver();
    receiver.answer = (_delivery, index) => (index < 2 ? { status: 503 } : { status: 204 });
    const endpoint = await w.endpointFor(receiver.url);
    const event = await w.emit("ticket.created");
    await delivered(receiver, event._id, 3);
    const attempts = await w.settled(endpoint.id, event._id, 3);
    expect(attempts.map((a) => [a.attempt, a.status_code, a.succeeded, a.error])).toEqual([
      [3, 204, true, null],
      [2, 503, false, "HTTP 503"],
      [1, 503, false, "HTTP 503"],
    ]);
    for (const delivery of receiver.received) {
      expect(delivery.headers["service-delivery"]).toBe(event._id);
      expect(() =>
        verifySignature(delivery.body, delivery.headers["service-signature"] as string, endpoint.secret),
      ).not.toThrow();
    }
    // Admin sees the same attempts.
    const adminList = await w.adminAt("GET", `/admin/v1/webhook-endpoints/${endpoint.id}/attempts`);
    expect(adminList.status).toBe(200);
    expect(adminList.body.data.map((a: { attempt: number }) => a.attempt)).toEqual([3, 2, 1]);
    expect((await w.getEndpoint(endpoint.id)).consecutive_failures).toBe(0);
  });

  it.each([
    ["a 4xx", { status: 400 }, "HTTP 400", 400],
    ["a 5xx", { status: 500 }, "HTTP 500", 500],
    [
      "a redirect",
      { status: 302, headers: { location: "/elsewhere" } },
      "redirect not followed (HTTP 302)",
      302,
    ],
  ] as const)(
    "counts %s as a failed attempt, five times, then one failed delivery",
    async (_what, answer, error, status) => {
      await expectFiveFailedAttempts(await workspace(), answer, error, status);
    },
  );

  // A timeout shows only once it has run out, five times over: on a server of its own whose
  // timeout is short (the receiver answers a second after it), rather than the 3 s the others
  // keep for TLS handshakes on a busy machine, which here cost 15 s of waiting.
  describe(`on a server with a ${SHORT_TIMEOUT_MS} ms timeout`, () => {
    it("counts a timeout as a failed attempt, five times, then one failed delivery", async () => {
      const w = await workspace(await startServer(SHORT_TIMEOUT_MS));
      await expectFiveFailedAttempts(
        w,
        { status: 200, delayMs: SHORT_TIMEOUT_MS + 1000 },
        `timeout after ${SHORT_TIMEOUT_MS} ms`,
        null,
      );
    });
  });
});

describe.concurrent("webhook delivery: refused connections, and the metrics", () => {
  it("counts a refused connection as a failed attempt", async ({ expect }) => {
    const w = await workspace();
    const receiver = await startReceiver();
    await receiver.close(); // nothing listens on its port any more
    const endpoint = await w.endpointFor(receiver.url);
    const event = await w.emit("contact.updated");
    const attempts = await w.settled(endpoint.id, event._id, 5);
    expect(new Set(attempts.map((a) => a.error))).toEqual(new Set(["connection refused"]));
  });

  it("counts attempts and finished deliveries by outcome on /metrics", async ({ expect }) => {
    // On a server of its own: its counters count this test's deliveries, none of another's.
    const w = await workspace(await startServer(TIMEOUT_MS));
    const scrape = async () => {
      const text = await (await fetch(`${w.baseUrl}/metrics`)).text();
      const value = (name: string, outcome: string) =>
        Number(new RegExp(`^${name}\\{outcome="${outcome}"\\} (\\d+)`, "m").exec(text)?.[1] ?? 0);
      return {
        succeeded: value("deskline_webhook_deliveries_total", "succeeded"),
        failed: value("deskline_webhook_deliveries_total", "failed"),
        failedAttempts: value("deskline_webhook_attempt_duration_seconds_count", "failed"),
      };
    };
    const before = await scrape();
    const receiver = await startReceiver();
    const down = await startReceiver();
    await down.close();
    await w.endpointFor(receiver.url, ["ticket.created"]);
    await w.endpointFor(down.url, ["contact.updated"]);
    await w.emit("ticket.created");
    await w.emit("contact.updated");
    const after = await eventually(
      scrape,
      (now) => now.succeeded > before.succeeded && now.failed > before.failed,
      "a succeeded and a failed delivery counted",
      SLOW,
    );
    // The failed delivery made five attempts, each observed in the latency histogram.
    expect(after.failedAttempts - before.failedAttempts).toBeGreaterThanOrEqual(5);
  });
});

describe.concurrent("webhook delivery: endpoints disabled, by failures or their owner", () => {
  it("disables an endpoint at exactly 15 failed deliveries, delivers nothing after, and resumes once enabled", async ({
    expect,
  }) => {
    const w = await workspace();
    const receiver = await startReceiver();
    receiver.answer = () => ({ status: 500 });
    const control = await startReceiver();
    const endpoint = await w.endpointFor(receiver.url);
    await w.endpointFor(control.url);
    const failed = [];
    for (let i = 0; i < 15; i++) failed.push(await w.emit("contact.created"));
    const disabled = await eventually(
      () => w.getEndpoint(endpoint.id),
      (e) => e.status === "disabled",
      "disabling",
      SLOW,
    );
    expect(disabled.consecutive_failures).toBe(15);
    expect(disabled.disabled_reason).toBe("consecutive_failures");
    expect(disabled.disabled_at).not.toBeNull();
    const mine = await w.attemptsOf(endpoint.id);
    expect(
      mine
        .filter((a) => a.attempt === 5 && !a.succeeded)
        .map((a) => a.event_id)
        .sort(),
    ).toEqual(failed.map((e) => e._id).sort());
    expect(mine).toHaveLength(15 * 5);
    // Every answer recorded came from the receiver (a loaded machine may time some out first).
    const answered = mine.filter((a) => a.status_code === 500).length;
    expect(receiver.received.length).toBeGreaterThanOrEqual(answered);
    expect(receiver.received.length).toBeLessThanOrEqual(15 * 5);

    const later = await w.emit("contact.created");
    await delivered(control, later._id);
    await new Promise((done) => setTimeout(done, 300));
    expect(receiver.deliveriesOf(later._id)).toHaveLength(0);

    const enabled = await w.adminAt("POST", `/admin/v1/webhook-endpoints/${endpoint.id}/enable`);
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ status: "enabled", consecutive_failures: 0, disabled_at: null });
    receiver.answer = () => ({ status: 200 });
    const resumed = await w.emit("contact.created");
    await delivered(receiver, resumed._id);
    expect(receiver.deliveriesOf(later._id)).toHaveLength(0); // skipped while disabled: not resent
  });

  it("stops an endpoint its owner disabled and resumes when the owner enables it", async ({ expect }) => {
    const w = await workspace();
    const { key, baseUrl } = w;
    const receiver = await startReceiver();
    const control = await startReceiver();
    const endpoint = await w.endpointFor(receiver.url);
    await w.endpointFor(control.url);
    const paused = await api.patch(`/open/v1/webhook-endpoints/${endpoint.id}`, {
      key,
      baseUrl,
      body: { status: "disabled" },
    });
    expect(paused.status).toBe(200);
    const skipped = await w.emit("ticket.updated");
    await delivered(control, skipped._id);
    const resumedBody = { status: "enabled" };
    expect(
      (await api.patch(`/open/v1/webhook-endpoints/${endpoint.id}`, { key, baseUrl, body: resumedBody }))
        .status,
    ).toBe(200);
    const after = await w.emit("ticket.updated");
    await delivered(receiver, after._id);
    expect(receiver.deliveriesOf(skipped._id)).toHaveLength(0);
  });
});

describe.concurrent("webhook delivery: secret rotation, and slow endpoints", () => {
  it("signs with the old and the new secret during a rotation's grace period, then with the new one", async ({
    expect,
  }) => {
    const w = await workspace();
    const { key, baseUrl } = w;
    const receiver = await startReceiver();
    const endpoint = await w.endpointFor(receiver.url);
    const rotate = (expires_in: number) =>
      api.post(`/open/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, {
        key,
        baseUrl,
        body: { expires_in },
      });
    const rotated = await rotate(3600);
    expect(rotated.status).toBe(200);
    const during = await w.emit("contact.created");
    await delivered(receiver, during._id);
    const [graced] = receiver.deliveriesOf(during._id);
    if (!graced) throw new Error("no delivery");
    const header = graced.headers["service-signature"] as string;
    expect(header.match(/v1=/g)).toHaveLength(2);
    for (const secret of [endpoint.secret, rotated.body.secret]) {
      expect(() => verifySignature(graced.body, header, secret)).not.toThrow();
      expect(() =>
        new Webhook(secret).verify(graced.body.toString(), { ...graced.headers } as Record<string, string>),
      ).not.toThrow();
    }

    const final = await rotate(0);
    const after = await w.emit("contact.created");
    await delivered(receiver, after._id);
    const [only] = receiver.deliveriesOf(after._id);
    if (!only) throw new Error("no delivery");
    const onlyHeader = only.headers["service-signature"] as string;
    expect(onlyHeader.match(/v1=/g)).toHaveLength(1);
    expect(() => verifySignature(only.body, onlyHeader, final.body.secret)).not.toThrow();
    expect(() => verifySignature(only.body, onlyHeader, [endpoint.secret, rotated.body.secret])).toThrow();
  });

  it("does not let a slow endpoint hold up the others", async () => {
    const w = await workspace();
    const slow = await startReceiver();
    slow.answer = () => "hang";
    const fast = await startReceiver();
    await w.endpointFor(slow.url);
    await w.endpointFor(fast.url);
    const events = [];
    for (let i = 0; i < 10; i++) events.push(await w.emit("contact.updated"));
    for (const event of events) await delivered(fast, event._id);
    slow.release();
  });
});

describe.concurrent("the attempts list", () => {
  it("is the endpoint owner's only: another workspace gets 404", async ({ expect }) => {
    const w = await workspace();
    const { baseUrl } = w;
    const receiver = await startReceiver();
    const endpoint = await w.endpointFor(receiver.url);
    const other = await newWorkspace(undefined, baseUrl);
    const foreign = await api.get(`/open/v1/webhook-endpoints/${endpoint.id}/attempts`, {
      key: other.key,
      baseUrl,
    });
    expect(foreign.status).toBe(404);
    const missing = await w.adminAt("GET", "/admin/v1/webhook-endpoints/we_0000000000000000000000/attempts");
    expect(missing.status).toBe(404);
  });
});
