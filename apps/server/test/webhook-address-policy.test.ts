import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createDeliveryAgent, postWebhook, type Resolver } from "../src/webhooks/delivery/http-client.js";
import { refusedRange } from "../src/webhooks/endpoints/address-policy.js";
import { api, newWorkspace } from "./helpers/api.js";
import { startTestServer, type TestServer } from "./helpers/server.js";
import { REFUSED_ADDRESSES } from "./helpers/special-addresses.js";

// The SSRF guard end to end: an endpoint URL whose host is an IP literal in a special-purpose
// range is refused at create and update (a second server on the run's database, with private
// networks not allowed, the default); a host name that resolves into such a range is refused by
// the delivery agent before it connects, through a resolver this test controls. No packet goes
// to any of these addresses.

let strict: TestServer;
let key: string;
beforeAll(async () => {
  strict = await startTestServer({ mongodbUri: inject("mongodbUri") });
  ({ key } = await newWorkspace(undefined, strict.baseUrl));
});
afterAll(() => strict.stop());

const literalUrl = (address: string) => `https://${address.includes(":") ? `[${address}]` : address}/hooks`;

describe("an IP-literal endpoint URL in a refused range", () => {
  it.each(REFUSED_ADDRESSES)(
    "%s (%s) is 400 url_address_refused on create",
    async (address, _entry, reason) => {
      const response = await api.post("/open/v1/webhook-endpoints", {
        baseUrl: strict.baseUrl,
        key,
        body: { url: literalUrl(address) },
      });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: "url_address_refused", param: "url" });
      expect(response.body.error.message).toContain(reason);
    },
  );

  it.each(REFUSED_ADDRESSES)(
    "%s (%s) is 400 url_address_refused on update, and the URL stays",
    async (address) => {
      const url = "https://hooks.example.invalid/x";
      const created = await api.post("/open/v1/webhook-endpoints", {
        baseUrl: strict.baseUrl,
        key,
        body: { url },
      });
      expect(created.status).toBe(201);
      const path = `/open/v1/webhook-endpoints/${created.body.id}`;
      const patched = await api.patch(path, {
        baseUrl: strict.baseUrl,
        key,
        body: { url: literalUrl(address) },
      });
      expect(patched.status).toBe(400);
      expect(patched.body.error).toMatchObject({ code: "url_address_refused", param: "url" });
      expect((await api.get(path, { baseUrl: strict.baseUrl, key })).body.url).toBe(url);
    },
  );
});

describe("an endpoint URL outside the refused ranges, or not a URL at all", () => {
  it("a host name, and a public IP literal, are accepted (host names are checked at connect)", async () => {
    for (const url of [
      "https://hooks.example.invalid/x",
      "https://192.0.2.1.example.invalid/x",
      "https://8.8.8.8/x",
    ]) {
      const response = await api.post("/open/v1/webhook-endpoints", {
        baseUrl: strict.baseUrl,
        key,
        body: { url },
      });
      expect(response.status).toBe(201);
    }
  });

  it("a URL that RFC 3986 takes but WHATWG parsing refuses is 400 parameter_invalid", async () => {
    for (const url of ["https://999.1.1.1/x", "https://1.2.3.4.5/x"]) {
      const response = await api.post("/open/v1/webhook-endpoints", {
        baseUrl: strict.baseUrl,
        key,
        body: { url },
      });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: "parameter_invalid", param: "url" });
    }
  });

  it("is accepted where WEBHOOK_ALLOW_PRIVATE_NETWORKS=true (development)", async () => {
    const dev = await startTestServer({
      mongodbUri: inject("mongodbUri"),
      config: { webhookAllowPrivateNetworks: true },
    });
    try {
      const { key: devKey } = await newWorkspace(undefined, dev.baseUrl);
      const response = await api.post("/open/v1/webhook-endpoints", {
        baseUrl: dev.baseUrl,
        key: devKey,
        body: { url: "https://10.0.0.1/hooks" },
      });
      expect(response.status).toBe(201);
    } finally {
      await dev.stop();
    }
  });
});

describe("a host name that resolves into a refused range", () => {
  const resolved: string[] = [];
  /** The test's DNS: `<n>.hooks.test` is the n-th refused address; nothing else resolves. */
  const resolve: Resolver = (hostname, _options, callback) => {
    resolved.push(hostname);
    const row = REFUSED_ADDRESSES[Number(hostname.split(".")[0])];
    if (!row) return callback(Object.assign(new Error(`${hostname} not found`), { code: "ENOTFOUND" }), []);
    callback(null, [{ address: row[0], family: row[0].includes(":") ? 6 : 4 }]);
  };
  const agent = createDeliveryAgent({ allowPrivateNetworks: false, ca: [], connections: 1, resolve });
  afterAll(() => agent.close());

  it.each(REFUSED_ADDRESSES.map((row, n) => [...row, n] as const))(
    "%s (%s) is refused before connect",
    async (address, _entry, reason, n) => {
      // Safety first: only an address the policy refuses is ever handed to the agent, so a broken
      // wiring can fail this test but never send a packet to it.
      expect(refusedRange(address)).toBe(reason);
      const host = `${n}.hooks.test`;
      const result = await postWebhook(agent, `https://${host}/x`, "{}", {}, 5_000);
      expect(result).toEqual({
        kind: "address_refused",
        reason: `${host} resolves to ${address} is ${reason}`,
      });
      expect(resolved).toContain(host);
    },
  );

  it("an IP literal in a refused range is refused by the connector itself, without a lookup", async () => {
    const before = resolved.length;
    for (const [address, , reason] of REFUSED_ADDRESSES.slice(0, 3)) {
      const result = await postWebhook(agent, literalUrl(address), "{}", {}, 5_000);
      expect(result).toEqual({ kind: "address_refused", reason: `${address} is ${reason}` });
    }
    expect(resolved.length).toBe(before);
  });
});
