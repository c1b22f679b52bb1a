import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { api, newWorkspace } from "./helpers/api.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

// A second server on the same database, with a bucket small enough to drain in a test and a
// clock the test moves by hand: refills are exact and no test sleeps.
let now = 1_000_000;
const advance = (ms: number) => {
  now += ms;
};
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    mongodbUri: inject("mongodbUri"),
    config: { rateLimitPerSecond: 2, rateLimitBurst: 3 },
    clock: () => now,
  });
});
afterAll(() => server.stop());

describe("rate limiting per API key", () => {
  it("allows the burst, then answers 429 with Retry-After, and refills at the rate", async () => {
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
    expect(limited.headers.get("retry-after")).toBe("1");
    expect(limited.headers.get("ratelimit-remaining")).toBe("0");

    // Another key has its own bucket.
    const { key: other } = await newWorkspace(undefined, server.baseUrl);
    expect((await api.get("/open/v1/contacts", { key: other, baseUrl: server.baseUrl })).status).toBe(200);

    // 2 per second: after 499 ms not even one token is back, after 500 ms exactly one.
    advance(499);
    expect((await call()).status).toBe(429);
    advance(1);
    const refilled = await call();
    expect(refilled.status).toBe(200);
    expect(refilled.headers.get("ratelimit-remaining")).toBe("0");
    expect((await call()).status).toBe(429);

    // A long pause fills the bucket to the burst, never beyond.
    advance(60_000);
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await call()).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
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
    expect(statuses).toEqual([201, 201, 201, 429, 429]);
    advance(500); // one token back, for the list
    const list = await api.get("/open/v1/contacts", {
      key,
      baseUrl: server.baseUrl,
      query: { search: "limited-" },
    });
    expect(list.status).toBe(200);
    expect(list.body.data.map((c: { name: string }) => c.name)).toEqual([
      "limited-2",
      "limited-1",
      "limited-0",
    ]);
  });
});
