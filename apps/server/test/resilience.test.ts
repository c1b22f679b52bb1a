import { request as httpRequest } from "node:http";
import { afterAll, describe, inject, it } from "vitest";
import { newApiKeyText } from "../src/workspaces/api-keys.js";
import { api, newWorkspace } from "./helpers/api.js";
import { eventually, startMain } from "./helpers/main-process.js";
import { startTestServer } from "./helpers/server.js";
import { createTcpProxy } from "./helpers/tcp-proxy.js";

// These tests make the database vanish and come back. They reach the run's database through a
// proxy of their own and cut that, so the shared database (and every other file) is untouched.
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

// The two blocks share nothing (a proxy each) and mostly wait on the database and a process:
// sibling concurrent blocks, they run at once.
describe.concurrent("resilience: a database that goes away and comes back", () => {
  it("answers 503 while it is gone and recovers with the data intact", async ({ expect }) => {
    const database = await createTcpProxy(inject("mongodbUri"));
    await database.open();
    cleanups.push(() => database.cut());
    const server = await startTestServer({ mongodbUri: database.uri });
    cleanups.push(() => server.stop());
    const { baseUrl } = server;

    const { key } = await newWorkspace(undefined, baseUrl);
    const created = await api.post("/open/v1/contacts", { key, baseUrl, body: { name: "Survivor" } });
    expect(created.status).toBe(201);

    await database.cut();
    const ready = await api.get("/readyz", { baseUrl });
    expect(ready.status).toBe(503);
    const during = await api.get(`/open/v1/contacts/${created.body.id}`, { key, baseUrl });
    expect(during.status).toBe(503);
    expect(during.body.error).toMatchObject({ type: "api_error", code: "database_unavailable" });
    expect(during.headers.get("retry-after")).toBe("5");
    expect(JSON.stringify(during.body)).not.toMatch(/Mongo|ECONNREFUSED|stack/i);
    const write = await api.post("/open/v1/contacts", { key, baseUrl, body: { name: "Lost?" } });
    expect(write.status).toBe(503);

    await database.open();
    await eventually(
      () => api.get("/readyz", { baseUrl }),
      (r) => r.status === 200,
      "readiness after restart",
    );
    const after = await api.get(`/open/v1/contacts/${created.body.id}`, { key, baseUrl });
    expect(after.status).toBe(200);
    expect(after.body.name).toBe("Survivor");
    const list = await api.get("/open/v1/contacts", { key, baseUrl });
    expect(list.body.data.map((c: { name: string }) => c.name)).toEqual(["Survivor"]);
  });
});

describe.concurrent("resilience: the server process (main.ts)", () => {
  it("starts while the database is down, serves 503, becomes ready when it appears, and on SIGTERM finishes in-flight requests and exits 0", async ({
    expect,
  }) => {
    // Nothing listens on the proxy's port until it is opened.
    const database = await createTcpProxy(inject("mongodbUri"));
    cleanups.push(() => database.cut());
    const main = startMain({
      MONGODB_URI: database.uri,
      MONGODB_DATABASE: inject("databaseName"),
      ADMIN_TOKEN: "main-admin",
    });
    const baseUrl = await main.baseUrl;
    expect((await api.get("/healthz", { baseUrl })).status).toBe(200);
    expect((await api.get("/readyz", { baseUrl })).status).toBe(503);
    // A well-formed key: only the database can tell whether it exists.
    const refused = await api.get("/open/v1/contacts", { baseUrl, key: newApiKeyText() });
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe("database_unavailable");

    // Only once the server has given up a first connection attempt does the database appear.
    await eventually(
      async () => main.output(),
      (output) => output.includes("database unreachable"),
      "the first connection attempt to fail",
    );
    await database.open();
    await eventually(
      () => api.get("/readyz", { baseUrl }),
      (r) => r.status === 200,
      "readiness once the database exists",
    );
    const workspace = await api.post("/admin/v1/workspaces", {
      baseUrl,
      body: { name: "late" },
      headers: { Authorization: "Bearer main-admin" },
    });
    expect(workspace.status).toBe(201);

    // A request in flight when SIGTERM arrives: its body is half sent. It must still be answered.
    const body = JSON.stringify({ name: "Graceful" });
    const inFlight = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest(`${baseUrl}/admin/v1/workspaces`, {
        method: "POST",
        headers: {
          Authorization: "Bearer main-admin",
          "Content-Type": "application/json",
          "Content-Length": Buffer.byteLength(body),
        },
      });
      req.on("response", (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => {
          text += chunk.toString();
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on("error", reject);
      req.write(body.slice(0, 5));
      setTimeout(() => req.end(body.slice(5)), 500);
    });
    await new Promise((done) => setTimeout(done, 100));
    main.child.kill("SIGTERM");
    const answered = await inFlight;
    expect(answered.status).toBe(201);
    expect(JSON.parse(answered.text)).toMatchObject({ object: "workspace", name: "Graceful" });
    expect(await main.exited).toBe(0);
    expect(main.output()).toContain("shutting down");
    expect(main.output()).toContain('"msg":"stopped"');
    expect(main.output()).not.toMatch(/unhandled|UnhandledPromiseRejection/i);
  });
});
