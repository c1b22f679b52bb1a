import { describe, expect, it, vi } from "vitest";
import type { StoredEvent } from "../src/events/model.js";
import type { WebhookRecoveryDoc } from "../src/webhooks/recoveries.js";
import { api, newWorkspace } from "./helpers/api.js";
import { startDeployment } from "./helpers/delivery.js";
import { startReceiver } from "./helpers/https-receiver.js";
import { eventually } from "./helpers/main-process.js";

// A recovery is an Agenda job on the workers (webhooks/recovery-job.ts): the API process only
// records it and schedules the job, a worker pages through the window a page at a time
// (WEBHOOK_RECOVERY_PAGE_SIZE) recording its progress on the recovery, and a worker SIGKILLed
// mid-way leaves it for the next, which goes on from the last page recorded; one SIGTERMed hands
// it on at once.

const SLOW = 120_000;
vi.setConfig({ testTimeout: 240_000 });

type Json = Record<string, any>;

/**
 * An endpoint that missed 300 events while disabled, enabled again, and a recovery of them
 * started on a deployment with only an API process (so it waits for a worker).
 */
async function recoveryWaiting(env: Record<string, string>) {
  const deployment = await startDeployment({ WEBHOOK_RECOVERY_PAGE_SIZE: "1", ...env });
  const apiProcess = await deployment.start("api");
  const baseUrl = await apiProcess.baseUrl;
  const world = await newWorkspace(undefined, baseUrl);
  const at = { key: world.key, baseUrl };
  const receiver = await startReceiver();
  const created = await api.post("/open/v1/webhook-endpoints", { ...at, body: { url: receiver.url } });
  const endpointId = created.body.id as string;
  const patch = (status: string) =>
    api.patch(`/open/v1/webhook-endpoints/${endpointId}`, { ...at, body: { status } });
  expect((await patch("disabled")).status).toBe(200);
  const since = Math.floor(Date.now() / 1000) - 1;
  const missed: StoredEvent[] = [];
  for (let i = 0; i < 300; i++) missed.push(await deployment.emit(world.workspaceId, "contact.created"));
  expect((await patch("enabled")).status).toBe(200);
  const recover = () =>
    api.post(`/open/v1/webhook-endpoints/${endpointId}/recover`, { ...at, body: { since } });
  const started = await recover();
  expect(started.status).toBe(202);
  const recoveryId = started.body.id as string;
  const get = async () => {
    const got = await api.get(`/open/v1/webhook-recoveries/${recoveryId}`, at);
    expect(got.status).toBe(200);
    return got.body as Json;
  };
  /** The recovery's deliveries' events, sorted, against the events missed. */
  const deliveredEvents = async () =>
    (
      await deployment.db
        .collection("webhook_deliveries")
        .find({ recovery_id: recoveryId }, { projection: { event_id: 1 } })
        .toArray()
    )
      .map((d) => d.event_id)
      .sort();
  return { deployment, missed, recover, recoveryId, get, deliveredEvents };
}

describe("recoveries run as jobs", () => {
  it("wait on an API-only deployment, run on a worker, and resume after the worker is killed mid-window", async () => {
    const { deployment, missed, recover, recoveryId, get, deliveredEvents } = await recoveryWaiting({
      WEBHOOK_RECOVERY_LOCK_MS: "1000",
    });
    // No worker: the API process does not run it.
    await new Promise((done) => setTimeout(done, 1_000));
    expect(await get()).toMatchObject({ status: "queued", scanned: 0, queued: 0 });

    const first = await deployment.start("worker");
    const partway = await eventually(get, (r) => r.scanned >= 10, "the recovery under way", SLOW);
    first.child.kill("SIGKILL");
    await first.exited;
    const left = await get();
    expect(left.status).toBe("running");
    expect(left.scanned).toBeGreaterThanOrEqual(partway.scanned);
    expect(left.scanned).toBeLessThan(missed.length);

    // The next worker takes the job over once its lock lapses, and goes on from the recorded page.
    await deployment.start("worker");
    const done = await eventually(get, (r) => r.status === "succeeded", "the recovery finished", SLOW);
    expect(done).toMatchObject({ scanned: missed.length, queued: missed.length });
    // One delivery per missed event: the page queued but not recorded before the kill, looked at
    // again, found its deliveries pending.
    expect(await deliveredEvents()).toEqual(missed.map((e) => e._id).sort());
    // Its slot is free: the endpoint can be recovered again.
    const doc = await deployment.db
      .collection<WebhookRecoveryDoc>("webhook_recoveries")
      .findOne({ _id: recoveryId });
    expect(doc?.slot).toBeUndefined();
    expect((await recover()).status).toBe(202);
  });

  it("a worker stopped mid-window finishes its page and hands the rest on at once, without waiting for its lock", async () => {
    // A lock far longer than the test: only a hand-over can let the next worker go on in time.
    const { deployment, missed, get, deliveredEvents } = await recoveryWaiting({
      WEBHOOK_RECOVERY_LOCK_MS: "600000",
    });
    const first = await deployment.start("worker");
    const partway = await eventually(get, (r) => r.scanned >= 10, "the recovery under way", SLOW);
    // Beside the first while it runs the recovery: it can take it only once the first lets it go.
    const second = await deployment.start("worker");
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    expect(first.output()).toContain("webhook recovery handed on: this worker is stopping");
    const left = await get();
    expect(left.status).toBe("running");
    expect(left.scanned).toBeGreaterThanOrEqual(partway.scanned);
    expect(left.scanned).toBeLessThan(missed.length);

    const done = await eventually(get, (r) => r.status === "succeeded", "the recovery finished", SLOW);
    expect(done).toMatchObject({ scanned: missed.length, queued: missed.length });
    expect(await deliveredEvents()).toEqual(missed.map((e) => e._id).sort());
    expect(second.output()).not.toContain("webhook recovery handed on");
  });

  it("a recovery of another workspace, or none, is 404", async () => {
    const deployment = await startDeployment();
    const baseUrl = await (await deployment.start("all")).baseUrl;
    const mine = await newWorkspace(undefined, baseUrl);
    const theirs = await newWorkspace(undefined, baseUrl);
    const receiver = await startReceiver();
    const created = await api.post("/open/v1/webhook-endpoints", {
      key: mine.key,
      baseUrl,
      body: { url: receiver.url },
    });
    const started = await api.post(`/open/v1/webhook-endpoints/${created.body.id}/recover`, {
      key: mine.key,
      baseUrl,
      body: { since: Math.floor(Date.now() / 1000) - 5 },
    });
    expect(started.status).toBe(202);
    for (const [key, id] of [
      [theirs.key, started.body.id],
      [mine.key, "rcv_nonexistent"],
    ]) {
      const got = await api.get(`/open/v1/webhook-recoveries/${id}`, { key, baseUrl });
      expect(got.status).toBe(404);
      expect(got.body.error).toMatchObject({ code: "resource_missing" });
    }
  });
});
