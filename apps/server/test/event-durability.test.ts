import { MongoClient } from "mongodb";
import { afterAll, describe, expect, inject, it } from "vitest";
import { loadConfig } from "../src/config.js";
import type { StoredEvent } from "../src/events/model.js";
import { api } from "./helpers/api.js";
import { allEvents } from "./helpers/events.js";
import { startInProcess } from "./helpers/in-process.js";
import { eventually, startMain } from "./helpers/main-process.js";

// The promise that an event is never lost, tested the hard way: the server process is killed
// with SIGKILL after its writes and before it relayed their events, and a new server on the same
// database (the run's, which outlives both; this one in the test's process, as only the killed
// one needs to be a process) must publish each of them, exactly once.

const databaseName = `deskline_kill_${process.pid}_${Date.now()}`;
const adminToken = "durability-admin";
const env = {
  MONGODB_URI: inject("mongodbUri"),
  MONGODB_DATABASE: databaseName,
  ADMIN_TOKEN: adminToken,
  RATE_LIMIT_PER_SECOND: "0",
};
const client = new MongoClient(inject("mongodbUri"));
const db = client.db(databaseName);
afterAll(async () => {
  await db.dropDatabase().catch(() => {});
  await client.close();
});

const asAdmin = { Authorization: `Bearer ${adminToken}` };

async function ready(baseUrl: string): Promise<void> {
  await eventually(
    () => api.get("/readyz", { baseUrl }),
    (r) => r.status === 200,
    "readiness",
  );
}

describe("an event is never lost", () => {
  it("a SIGKILL between the change and the relay delays the event; after a restart it is published exactly once", async () => {
    // The first process never relays on its own: its immediate relay is off and its sweep an hour away.
    const doomed = startMain({ ...env, EVENT_RELAY_IMMEDIATE: "false", EVENT_RELAY_INTERVAL_MS: "3600000" });
    const firstUrl = await doomed.baseUrl;
    await ready(firstUrl);
    const workspace = await api.post("/admin/v1/workspaces", {
      baseUrl: firstUrl,
      headers: asAdmin,
      body: { name: "durable" },
    });
    const issued = await api.post(`/admin/v1/workspaces/${workspace.body.id}/api-keys`, {
      baseUrl: firstUrl,
      headers: asAdmin,
      body: { name: "durable", scopes: ["contacts:write", "tickets:write", "webhooks:manage"] },
    });
    const key: string = issued.body.key;
    const options = { baseUrl: firstUrl, key };
    const contact = await api.post("/open/v1/contacts", { ...options, body: { name: "Before the crash" } });
    const patched = await api.patch(`/open/v1/contacts/${contact.body.id}`, {
      ...options,
      body: { lifecycle_stage: "customer" },
    });
    const ticket = await api.post("/open/v1/tickets", { ...options, body: { subject: "Before the crash" } });
    expect([contact.status, patched.status, ticket.status]).toEqual([201, 200, 201]);

    // The changes are stored with their events; none has reached `events` yet.
    const pendingOn = async (collection: string, id: string) =>
      (await db.collection<{ _id: string; pending_events?: StoredEvent[] }>(collection).findOne({ _id: id }))
        ?.pending_events ?? [];
    const pending = [
      ...(await pendingOn("contacts", contact.body.id)),
      ...(await pendingOn("tickets", ticket.body.id)),
    ];
    expect(pending.map((event) => event.type)).toEqual([
      "contact.created",
      "contact.updated",
      "ticket.created",
    ]);
    expect(await allEvents(key, {}, firstUrl)).toEqual([]);

    doomed.child.kill("SIGKILL");
    expect(await doomed.exited).toBeNull();

    const revived = await startInProcess(loadConfig(env));
    const secondUrl = revived.baseUrl;
    await ready(secondUrl);
    const events = await eventually(
      () => allEvents(key, {}, secondUrl),
      (list) => list.length >= 3,
      "the events after the restart",
    );
    expect(events.map((event) => event.id).sort()).toEqual(pending.map((event) => event._id).sort());
    const byType = Object.fromEntries(events.map((event) => [event.type, event]));
    expect(byType["contact.created"]?.data).toEqual(contact.body);
    expect(byType["contact.updated"]?.data).toEqual(patched.body);
    expect(byType["contact.updated"]?.previous_attributes).toEqual({ lifecycle_stage: null });
    expect(byType["ticket.created"]?.data).toEqual(ticket.body);
    expect(await pendingOn("contacts", contact.body.id)).toEqual([]);
    expect(await pendingOn("tickets", ticket.body.id)).toEqual([]);

    // Once: the store holds each event one time, and a later sweep adds nothing.
    const stored = await db.collection("events").countDocuments({ workspace_id: workspace.body.id });
    expect(stored).toBe(3);
    await revived.stop();
    expect(revived.output()).toContain("relayed events left by an interrupted writer");
  });
});
