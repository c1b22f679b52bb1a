import { MongoClient } from "mongodb";
import { afterAll, describe, expect, inject, it, vi } from "vitest";
import { newId } from "../src/platform/ids.js";
import { newApiKeyText } from "../src/workspaces/api-keys.js";
import { api, request } from "./helpers/api.js";
import { eventually, startMain } from "./helpers/main-process.js";

// Ready means migrated (docs/decisions.md, "Ready means migrated"): a process on a database whose
// migrations are not done answers /readyz 503 `migrating` and the API 503, whatever its ROLE, and
// turns ready once they are. Only real processes show it: main.ts wires the probes, the roles
// and the start-up. The migration lock is held by the test, as by another process migrating.

vi.setConfig({ testTimeout: 120_000 });

const client = new MongoClient(inject("mongodbUri"));
afterAll(() => client.close());

describe("a process whose database is not migrated yet", () => {
  it("answers /readyz 503 `migrating` and the API 503 until the migrations are done, API and worker alike", async () => {
    // A brand-new database whose migration lock another process (this test) holds.
    const databaseName = `deskline_ready_${newId("req")}`;
    const db = (await client.connect()).db(databaseName);
    const lock = db.collection<{ _id: string; holder: string; expires_at: Date }>("migration_lock");
    await lock.insertOne({ _id: "migrations", holder: "test", expires_at: new Date(Date.now() + 600_000) });
    const env = {
      MONGODB_URI: inject("mongodbUri"),
      MONGODB_DATABASE: databaseName,
      ADMIN_TOKEN: "ready-admin",
    };
    const apiProcess = startMain({ ...env, ROLE: "api" });
    const worker = startMain({ ...env, ROLE: "worker" });
    const apiUrl = await apiProcess.baseUrl;
    const workerUrl = await worker.baseUrl;
    await apiProcess.logged(/another process is migrating the database/);
    await worker.logged(/another process is migrating the database/);

    for (const baseUrl of [apiUrl, workerUrl]) {
      expect(await request("GET", "/healthz", { baseUrl })).toMatchObject({ status: 200 });
      const ready = await request("GET", "/readyz", { baseUrl });
      expect(ready).toMatchObject({ status: 503, body: { status: "migrating" } });
    }
    // The API touches nothing: a write and a read (a well-formed key only the database could judge).
    const write = await api.post("/admin/v1/workspaces", {
      baseUrl: apiUrl,
      body: { name: "too early" },
      headers: { Authorization: "Bearer ready-admin" },
    });
    expect(write.status).toBe(503);
    expect(write.body.error).toMatchObject({ type: "api_error", code: "database_unavailable" });
    expect(write.body.error.message).toMatch(/migrations/);
    expect(write.headers.get("retry-after")).toBe("5");
    const read = await api.get("/open/v1/contacts", { baseUrl: apiUrl, key: newApiKeyText() });
    expect(read.status).toBe(503);
    expect(await db.collection("workspaces").countDocuments()).toBe(0);

    // The other process is done: both migrate (one after the other) and turn ready.
    await lock.deleteOne({ _id: "migrations" });
    for (const baseUrl of [apiUrl, workerUrl]) {
      await eventually(
        () => request("GET", "/readyz", { baseUrl }),
        (r) => r.status === 200 && r.body.status === "ready",
        `readiness of ${baseUrl} once the lock is free`,
      );
    }
    expect((await db.collection("migrations").find().toArray()).length).toBeGreaterThan(0);
    const created = await api.post("/admin/v1/workspaces", {
      baseUrl: apiUrl,
      body: { name: "in time" },
      headers: { Authorization: "Bearer ready-admin" },
    });
    expect(created.status).toBe(201);
    await worker.logged(/delivering webhooks/);
    await db.dropDatabase();
  });
});
