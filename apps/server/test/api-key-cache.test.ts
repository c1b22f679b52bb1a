import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { admin, api, newWorkspace } from "./helpers/api.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

// API_KEY_CACHE_MS (docs/decisions.md): each process keeps a key it looked up for that long. The
// run's shared server revokes; a second API process on the same database shows what the others
// see. The revoking process itself stops the key at once (auth.test.ts).
const CACHE_MS = 1_500;
let other: TestServer;
let uncached: TestServer;
beforeAll(async () => {
  const shared = { mongodbUri: inject("mongodbUri"), databaseName: inject("databaseName") };
  other = await startTestServer({ ...shared, config: { apiKeyCacheMs: CACHE_MS } });
  uncached = await startTestServer({ ...shared, config: { apiKeyCacheMs: 0 } });
});
afterAll(async () => {
  await other.stop();
  await uncached.stop();
});

async function revokedKey() {
  const { workspaceId } = await newWorkspace();
  const created = await admin("POST", `/admin/v1/workspaces/${workspaceId}/api-keys`, {
    name: "revoked elsewhere",
    scopes: ["contacts:read"],
  });
  expect(created.status).toBe(201);
  const call = (server: TestServer) =>
    api.get("/open/v1/contacts", { key: created.body.key, baseUrl: server.baseUrl });
  for (const server of [other, uncached]) expect((await call(server)).status).toBe(200);
  const revoked = await admin("DELETE", `/admin/v1/api-keys/${created.body.id}`);
  expect(revoked.status).toBe(200);
  return call;
}

describe("the API key cache of other processes", () => {
  it("lets a revoked key through for at most API_KEY_CACHE_MS, then refuses it", async () => {
    const call = await revokedKey();
    const since = Date.now();
    // Looked up moments ago, so still trusted there: the cache is really used.
    expect((await call(other)).status).toBe(200);
    let status = 200;
    while (status === 200 && Date.now() - since < 10 * CACHE_MS) {
      await new Promise((wait) => setTimeout(wait, 100));
      status = (await call(other)).status;
    }
    expect(status).toBe(401);
  });

  it("with API_KEY_CACHE_MS=0 refuses a revoked key at once", async () => {
    const call = await revokedKey();
    const refused = await call(uncached);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe("invalid_api_key");
  });
});
