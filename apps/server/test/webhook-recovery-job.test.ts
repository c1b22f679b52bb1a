import { describe, expect, it, vi } from "vitest";
import type { StoredEvent } from "../src/events/model.js";
import type { WebhookRecoveryDoc } from "../src/webhooks/recovery/store.js";
import { api, newWorkspace } from "./helpers/api.js";
import { startDeployment } from "./helpers/delivery.js";
import { startReceiver } from "./helpers/https-receiver.js";
import { eventually } from "./helpers/main-process.js";

// A recovery is an Agenda job on the workers (webhooks/recovery/job.ts): the API process only
// records it and schedules the job, a worker pages through the window a page at a time
// (WEBHOOK_RECOVERY_PAGE_SIZE) recording its progress on the recovery, and a worker SIGKILLed
// mid-way leaves it for the next, which goes on from the last page recorded.

const SLOW = 120_000;
vi.setConfig({ testTimeout: 240_000 });

type Json = Record<string, any>;

describe("recoveries run as jobs", () => {
  it("wait on an API-only deployment, run on a worker, and resume after the worker is killed mid-window", async () => {
    const deployment = await startDeployment({
      WEBHOOK_RECOVERY_PAGE_SIZE: "1",
      WEBHOOK_RECOVERY_LOCK_MS: "1000",
    });
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

    const started = await api.post(`/open/v1/webhook-endpoints/${endpointId}/recover`, {
      ...at,
      body: { since },
    });
    expect(started.status).toBe(202);
    const recoveryId = started.body.id as string;
    const get = async () => {
      const got = await api.get(`/open/v1/webhook-recoveries/${recoveryId}`, at);
      expect(got.status).toBe(200);
      return got.body as Json;
    };
    // No worker: the API process does not run it.
    await new Promise((done) => setTimeout(done, 1_000));
    expect(await get()).toMatchObject({ status: "queued", scanned: 0, queued: 0 });

    // A process: only a process can be SIGKILLed (its lock left behind, as after a crash).
    const first = await deployment.startProcess("worker");
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
    const deliveries = await deployment.db
      .collection("webhook_deliveries")
      .find({ recovery_id: recoveryId }, { projection: { event_id: 1 } })
      .toArray();
    expect(deliveries.map((d) => d.event_id).sort()).toEqual(missed.map((e) => e._id).sort());
    // Its slot is free: the endpoint can be recovered again.
    const doc = await deployment.db
      .collection<WebhookRecoveryDoc>("webhook_recoveries")
      .findOne({ _id: recoveryId });
    expect(doc?.slot).toBeUndefined();
    const again = await api.post(`/open/v1/webhook-endpoints/${endpointId}/recover`, {
      ...at,
      body: { since },
    });
    expect(again.status).toBe(202);
  });
});

describe("recoveries looked up by id", () => {
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
