import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { api, newWorkspace } from "./helpers/api.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

let server: TestServer;
beforeAll(async () => {
  // A second server on the same database, with a bucket small enough to drain in a test.
  server = await startTestServer({
    mongodbUri: inject("mongodbUri"),
    config: { rateLimitPerSecond: 2, rateLimitBurst: 3 },
  });
});
afterAll(() => server.stop());

describe("rate limiting per API key", () => {
  it("allows the burst, then answers 429 with Retry-After, and refills", async () => {
    const { key } = await newWorkspace(undefined, server.baseUrl);
    const call = () => api.get("/open/v1/contacts", { key, baseUrl: server.baseUrl });
    const remaining: (string | null)[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await call();
      expect(response.status).toBe(200);
      expect(response.headers.get("ratelimit-limit")).toBe("3");
      remaining.push(response.headers.get("ratelimit-remaining"));
    }
    expect(remaining).toEqual(["2", "1", "0"]);

    const limited = await call();
    expect(limited.status).toBe(429);
    expect(limited.body.error).toMatchObject({ type: "rate_limit_error", code: "rate_limited" });
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(limited.headers.get("ratelimit-remaining")).toBe("0");

    // Another key has its own bucket.
    const { key: other } = await newWorkspace(undefined, server.baseUrl);
    expect((await api.get("/open/v1/contacts", { key: other, baseUrl: server.baseUrl })).status).toBe(200);

    await new Promise((done) => setTimeout(done, 1100));
    expect((await call()).status).toBe(200);
  });

  it("a rejected request does not reach the handler", async () => {
    const { key } = await newWorkspace(undefined, server.baseUrl);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const response = await api.post("/open/v1/contacts", {
        key,
        baseUrl: server.baseUrl,
        body: { name: `limited-${i}` },
      });
      statuses.push(response.status);
    }
    expect(statuses.filter((s) => s === 201)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(2);
    await new Promise((done) => setTimeout(done, 600));
    const list = await api.get("/open/v1/contacts", {
      key,
      baseUrl: server.baseUrl,
      query: { search: "limited-" },
    });
    expect(list.body.data).toHaveLength(3);
  });
});
