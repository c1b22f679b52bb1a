import { describe, expect, it, vi } from "vitest";
import { api, newWorkspace } from "./helpers/api.js";
import { createEndpoint, startDeployment } from "./helpers/delivery.js";
import { type Receiver, startReceiver } from "./helpers/https-receiver.js";
import { eventually } from "./helpers/main-process.js";

// A fleet delivers as one (docs/decisions.md, "One schedule: the delivery records"): one API
// process and two workers over one database, WEBHOOK_ENDPOINT_CONCURRENCY=1, endpoints on hosts of
// their own and endpoints that share one host. Each receiver counts the attempts in flight to each
// of its endpoints (never more than one, across both workers) and the order events arrive in (the
// order they happened), and every event reaches every endpoint exactly once. The servers run in
// this process (each with its own database client, dispatcher and leases, as a process has) and
// stop after the file's tests.

vi.setConfig({ testTimeout: 240_000 });

const CONTACTS = 120;
const ANSWER_AFTER_MS = 30;

/** What one endpoint's receiver saw: the most attempts in flight at once, and the events in order. */
interface Seen {
  inFlight: number;
  mostInFlight: number;
  events: string[];
}

/** Answers every delivery after ANSWER_AFTER_MS, counting attempts in flight per path. */
function countInFlight(receiver: Receiver, seen: Map<string, Seen>): void {
  receiver.answer = (delivery) => {
    const endpoint = seen.get(`${receiver.port}${delivery.path}`);
    if (!endpoint) return { status: 500 };
    endpoint.inFlight++;
    endpoint.mostInFlight = Math.max(endpoint.mostInFlight, endpoint.inFlight);
    endpoint.events.push(delivery.headers["service-delivery"] as string);
    // Registered before the answer's own timer, so it runs first: the count covers the whole wait.
    setTimeout(() => endpoint.inFlight--, ANSWER_AFTER_MS);
    return { status: 200, delayMs: ANSWER_AFTER_MS };
  };
}

describe("a fleet of workers", () => {
  it("keeps one attempt in flight per endpoint and every endpoint's events in order, none twice, none lost", async () => {
    // A timeout long past the receivers' 30 ms, so that on a busy machine no attempt times out
    // after its request arrived and goes again (a retry of that kind is not what is measured).
    const deployment = await startDeployment({
      WEBHOOK_ENDPOINT_CONCURRENCY: "1",
      WEBHOOK_TIMEOUT_MS: "20000",
    });
    const apiProcess = await deployment.start("api");
    await Promise.all([deployment.start("worker"), deployment.start("worker")]);
    const baseUrl = await apiProcess.baseUrl;
    const { key } = await newWorkspace(undefined, baseUrl);

    const seen = new Map<string, Seen>();
    // Three endpoints on hosts of their own, and three paths of one shared receiver.
    const own = await Promise.all([startReceiver(), startReceiver(), startReceiver()]);
    const shared = await startReceiver();
    for (const receiver of [...own, shared]) countInFlight(receiver, seen);
    const targets = [
      ...own.map((r) => ({ receiver: r, path: "" })),
      ...["/a", "/b", "/c"].map((path) => ({ receiver: shared, path })),
    ];
    for (const { receiver, path } of targets) {
      const url = `${receiver.url}${path}`;
      seen.set(`${receiver.port}${new URL(url).pathname}`, { inFlight: 0, mostInFlight: 0, events: [] });
      await createEndpoint({ key, baseUrl }, url, ["contact.created"]);
    }
    const events: string[] = [];
    for (let i = 0; i < CONTACTS; i++) {
      const created = await api.post("/open/v1/contacts", { key, baseUrl, body: { name: `Fleet ${i}` } });
      expect(created.status).toBe(201);
    }
    await eventually(
      async () => [...seen.values()].map((s) => s.events.length),
      (counts) => counts.every((n) => n >= CONTACTS),
      "every event at every endpoint",
      180_000,
    );
    for (const [name, endpoint] of seen) {
      expect(endpoint.mostInFlight, `attempts in flight at once to ${name}`).toBe(1);
      expect(new Set(endpoint.events).size, `events twice at ${name}`).toBe(endpoint.events.length);
      expect(endpoint.events, `the order events reached ${name}`).toEqual([...endpoint.events].sort());
      events.push(...endpoint.events);
    }
    expect(events).toHaveLength(CONTACTS * targets.length);
  });
});
