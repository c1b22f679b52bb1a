import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { api, newWorkspace } from "./helpers/api.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

// CUSTOM_FIELD_CACHE_MS (docs/decisions.md, "Typed custom fields"): each process keeps a
// workspace's definitions for that long. The run's shared server defines a field; a second API
// process on the same database shows what the others see, a third with the cache off.
const CACHE_MS = 1_500;
let other: TestServer;
let uncached: TestServer;
beforeAll(async () => {
  const shared = { mongodbUri: inject("mongodbUri"), databaseName: inject("databaseName") };
  [other, uncached] = await Promise.all([
    startTestServer({ ...shared, config: { customFieldCacheMs: CACHE_MS } }),
    startTestServer({ ...shared, config: { customFieldCacheMs: 0 } }),
  ]);
});
afterAll(async () => {
  await Promise.all([other.stop(), uncached.stop()]);
});

/** A workspace whose `seats` becomes a number field after both processes have read it undefined. */
async function seatsDefinedElsewhere() {
  const { key } = await newWorkspace();
  const write = (server: TestServer | undefined, seats: unknown) =>
    api.post("/open/v1/contacts", {
      key,
      baseUrl: server?.baseUrl,
      body: { name: "Seats", custom_fields: { seats } },
    });
  for (const server of [other, uncached]) expect((await write(server, "many")).status).toBe(201);
  const defined = await api.post("/open/v1/custom-field-definitions", {
    key,
    body: { key: "seats", label: "Seats", type: "number" },
  });
  expect(defined.status).toBe(201);
  // The process that defined it checks at once.
  expect((await write(undefined, "many")).status).toBe(400);
  return write;
}

describe("the custom field definitions of other processes", () => {
  it("apply within CUSTOM_FIELD_CACHE_MS", async () => {
    const write = await seatsDefinedElsewhere();
    const since = Date.now();
    let status = 201;
    while (status === 201 && Date.now() - since < 10 * CACHE_MS) {
      await new Promise((wait) => setTimeout(wait, 100));
      status = (await write(other, "many")).status;
    }
    expect(status).toBe(400);
  });

  it("with CUSTOM_FIELD_CACHE_MS=0 apply at once", async () => {
    const write = await seatsDefinedElsewhere();
    const refused = await write(uncached, "many");
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: "parameter_invalid", param: "custom_fields.seats" });
    expect((await write(uncached, 12)).status).toBe(201);
  });
});
