import { beforeAll, describe, expect, it } from "vitest";
import { SecretsAtRest } from "../src/webhooks/endpoints/secrets/at-rest.js";
import type { WebhookEndpointDoc } from "../src/webhooks/endpoints/store.js";

import { ALL_SCOPES, api, newKey, newWorkspace } from "./helpers/api.js";
import { runDatabase } from "./helpers/database.js";
import { walkPages } from "./helpers/paging.js";

/** The test servers run without SECRETS_ENCRYPTION_KEY: secrets are stored as they are. */
const plaintext = new SecretsAtRest();
const signingSecrets = (doc: WebhookEndpointDoc, now?: Date) => plaintext.signingSecrets(doc, now);

const database = runDatabase();
let workspaceId: string;
let key: string;
beforeAll(async () => {
  ({ workspaceId, key } = await newWorkspace());
});

const URL_ = "https://hooks.example.invalid/deskline";
const create = (body: unknown, k = key, headers?: Record<string, string>) =>
  api.post("/open/v1/webhook-endpoints", { key: k, body, headers });

async function storedEndpoint(id: string): Promise<WebhookEndpointDoc> {
  const doc = await (await database())
    .collection<WebhookEndpointDoc>("webhook_endpoints")
    .findOne({ _id: id });
  if (!doc) throw new Error(`endpoint ${id} is not stored`);
  return doc;
}

/** Get, update (with `update`), rotate-secret and delete of the endpoint at `path`, in turn, with the file's key. */
const everyOperationOn = async (path: string, update: Record<string, unknown>) => [
  await api.get(path, { key }),
  await api.patch(path, { key, body: update }),
  await api.post(`${path}/rotate-secret`, { key, body: {} }),
  await api.delete(path, { key }),
];

describe("creating a webhook endpoint", () => {
  it("answers 201 with the endpoint and a whsec_ secret of 32 random bytes; events omitted means all", async () => {
    const response = await create({ url: URL_ });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      object: "webhook_endpoint",
      url: URL_,
      description: null,
      events: ["*"],
      status: "enabled",
      disabled_at: null,
      disabled_reason: null,
      consecutive_failures: 0,
    });
    expect(response.body.id).toMatch(/^we_[0-9A-Za-z]+$/);
    const { secret } = response.body;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice("whsec_".length), "base64")).toHaveLength(32);
    const other = await create({ url: URL_ });
    expect(other.body.secret).not.toBe(secret);
  });

  it("keeps the description and the event types it was given", async () => {
    const body = { url: URL_, description: "CRM sync", events: ["contact.created", "ticket.updated"] };
    const response = await create(body);
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject(body);
    const fetched = await api.get(`/open/v1/webhook-endpoints/${response.body.id}`, { key });
    expect(fetched.body).toMatchObject(body);
  });

  it.each([
    ["http://hooks.example.invalid/x"],
    ["ftp://hooks.example.invalid/x"],
    ["hooks.example.invalid/x"],
    ["not a url"],
    [""],
  ])("refuses the non-HTTPS url %j with 400 param url", async (url) => {
    const response = await create({ url });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: "parameter_invalid", param: "url" });
  });

  it.each([
    [{ url: URL_, events: ["contact.deleted"] }, "parameter_invalid"],
    [{ url: URL_, events: [] }, "parameter_invalid"],
    [{ url: URL_, events: ["contact.created", "contact.created"] }, "parameter_invalid"],
    [{ url: URL_, events: "contact.created" }, "parameter_invalid"],
    [{ description: "no url" }, "parameter_missing"],
    [{ url: URL_, secret: "whsec_mine" }, "parameter_unknown"],
    [{ url: URL_, status: "disabled" }, "parameter_unknown"],
  ])("refuses %j with 400 %s and writes nothing", async (body, code) => {
    const before = await walkPages("/open/v1/webhook-endpoints", key, { limit: 100 });
    const response = await create(body);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe(code);
    expect(await walkPages("/open/v1/webhook-endpoints", key, { limit: 100 })).toEqual(before);
  });

  it("replays an Idempotency-Key with the same endpoint and secret, creating one endpoint", async () => {
    const { key: own } = await newWorkspace();
    const headers = { "Idempotency-Key": "endpoint-once" };
    const first = await create({ url: URL_ }, own, headers);
    const second = await create({ url: URL_ }, own, headers);
    expect(second.status).toBe(201);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.body).toEqual(first.body);
    expect(await walkPages("/open/v1/webhook-endpoints", own)).toEqual([first.body.id]);
  });
});

describe("the secret stays secret", () => {
  it("is returned by create only, never by get, list, PATCH or delete", async () => {
    const created = await create({ url: URL_, description: "secretive" });
    const { id, secret } = created.body;
    const path = `/open/v1/webhook-endpoints/${id}`;
    const answers = [
      await api.get(path, { key }),
      await api.get("/open/v1/webhook-endpoints", { key, query: { limit: 100 } }),
      await api.patch(path, { key, body: { description: "still secretive" } }),
      await api.patch(path, { key, body: {} }),
      await api.delete(path, { key }),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      const text = JSON.stringify(answer.body);
      expect(text).not.toContain(secret);
      expect(text).not.toContain("whsec_");
      expect(text).not.toContain('"secret"');
    }
  });
});

describe("reading, listing and deleting", () => {
  it("lists the workspace's endpoints newest first, paging with starting_after", async () => {
    const { key: own } = await newWorkspace();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await create({ url: `${URL_}/${i}` }, own)).body.id);
    expect(await walkPages("/open/v1/webhook-endpoints", own, { limit: 2 })).toEqual(ids.reverse());
  });

  it("deletes with {id, object, deleted: true}; afterwards it is 404 everywhere", async () => {
    const { id } = (await create({ url: URL_ })).body;
    const path = `/open/v1/webhook-endpoints/${id}`;
    const deleted = await api.delete(path, { key });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ id, object: "webhook_endpoint", deleted: true });
    for (const response of await everyOperationOn(path, { description: "x" })) {
      expect(response.status).toBe(404);
      expect(response.body.error).toMatchObject({ code: "resource_missing", param: "id" });
    }
    expect(await walkPages("/open/v1/webhook-endpoints", key, { limit: 100 })).not.toContain(id);
  });

  it("an unknown id is 404 resource_missing", async () => {
    const response = await api.get("/open/v1/webhook-endpoints/we_0000000000000000000000", { key });
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe("resource_missing");
  });
});

describe("updating an endpoint: its fields", () => {
  it("changes only the fields sent; null clears the description; events are replaced whole", async () => {
    const created = (await create({ url: URL_, description: "before", events: ["contact.created"] })).body;
    const path = `/open/v1/webhook-endpoints/${created.id}`;
    const moved = await api.patch(path, {
      key,
      body: { url: "https://new.example.invalid/hook", events: ["ticket.created", "ticket.updated"] },
    });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({
      url: "https://new.example.invalid/hook",
      description: "before",
      events: ["ticket.created", "ticket.updated"],
      status: "enabled",
    });
    expect(moved.body.updated_at > created.updated_at).toBe(true);
    const cleared = await api.patch(path, { key, body: { description: null, events: ["*"] } });
    expect(cleared.body).toMatchObject({ description: null, events: ["*"] });
    expect((await api.get(path, { key })).body).toEqual(cleared.body);
  });

  it("a PATCH that changes nothing answers 200 and writes nothing", async () => {
    const created = (await create({ url: URL_, description: "same" })).body;
    const path = `/open/v1/webhook-endpoints/${created.id}`;
    for (const body of [{}, { url: URL_, description: "same", events: ["*"], status: "enabled" }]) {
      const response = await api.patch(path, { key, body });
      expect(response.status).toBe(200);
      expect(response.body).toEqual(toPublic(created));
    }
  });
});

describe("updating an endpoint: its status, its version, refused changes", () => {
  it("the owner disables and enables it: stamps and reason are set, then cleared with the failure count", async () => {
    const { id } = (await create({ url: URL_ })).body;
    const path = `/open/v1/webhook-endpoints/${id}`;
    const disabled = await api.patch(path, { key, body: { status: "disabled" } });
    expect(disabled.status).toBe(200);
    expect(disabled.body).toMatchObject({ status: "disabled", disabled_reason: "owner" });
    expect(Date.parse(disabled.body.disabled_at)).toBeGreaterThan(Date.now() - 60_000);
    const again = await api.patch(path, { key, body: { status: "disabled" } });
    expect(again.body).toEqual(disabled.body);

    // As if deliveries had failed meanwhile: enabling starts the count afresh.
    await (await database())
      .collection<WebhookEndpointDoc>("webhook_endpoints")
      .updateOne({ _id: id }, { $set: { consecutive_failures: 15 } });
    const enabled = await api.patch(path, { key, body: { status: "enabled" } });
    expect(enabled.body).toMatchObject({
      status: "enabled",
      disabled_at: null,
      disabled_reason: null,
      consecutive_failures: 0,
    });
  });

  it("a PATCH is version-checked like every record's; an endpoint stored before versions still updates", async () => {
    const { id } = (await create({ url: URL_ })).body;
    const path = `/open/v1/webhook-endpoints/${id}`;
    expect((await storedEndpoint(id)).version).toBe(0);
    const first = await api.patch(path, { key, body: { description: "one" } });
    expect(first.status).toBe(200);
    expect((await storedEndpoint(id)).version).toBe(1);
    // A PATCH that changes nothing writes nothing, the version included.
    await api.patch(path, { key, body: { description: "one" } });
    expect((await storedEndpoint(id)).version).toBe(1);

    // As an endpoint written before endpoints had versions: no `version` field at all.
    const collection = (await database()).collection<WebhookEndpointDoc>("webhook_endpoints");
    await collection.updateOne({ _id: id }, { $unset: { version: "" } });
    const legacy = await api.patch(path, { key, body: { description: "two" } });
    expect(legacy.status).toBe(200);
    expect(legacy.body.description).toBe("two");
    const stored = await storedEndpoint(id);
    expect(stored.description).toBe("two");
    expect(stored.version).toBe(1);
  });

  it.each([
    [{ url: "http://plain.example.invalid" }, "parameter_invalid", "url"],
    [{ events: ["ticket.deleted"] }, "parameter_invalid", undefined],
    [{ events: null }, "parameter_invalid", "events"],
    [{ status: "paused" }, "parameter_invalid", "status"],
    [{ secret: "whsec_x" }, "parameter_unknown", "secret"],
  ])("refuses %j with 400 %s and changes nothing", async (body, code, param) => {
    const created = (await create({ url: URL_ })).body;
    const path = `/open/v1/webhook-endpoints/${created.id}`;
    const response = await api.patch(path, { key, body });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe(code);
    if (param) expect(response.body.error.param).toBe(param);
    expect((await api.get(path, { key })).body).toEqual(toPublic(created));
  });
});

describe("custom headers", () => {
  it("are kept by name and shown by name only, never with their values", async () => {
    const created = await create({ url: URL_, headers: { "X-Api-Key": "k-1", Authorization: "Basic dTpw" } });
    expect(created.status).toBe(201);
    expect(created.body.header_names).toEqual(["Authorization", "X-Api-Key"]);
    const fetched = await api.get(`/open/v1/webhook-endpoints/${created.body.id}`, { key });
    expect(fetched.body.header_names).toEqual(["Authorization", "X-Api-Key"]);
    expect(JSON.stringify(fetched.body)).not.toContain("k-1");
    const stored = await storedEndpoint(created.body.id);
    expect(stored.custom_headers?.map((h) => h.name)).toEqual(["Authorization", "X-Api-Key"]);
  });

  it.each([
    ["Host"],
    ["content-type"],
    ["Content-Length"],
    ["Service-Signature"],
    ["service-event"],
    ["Webhook-Id"],
    ["User-Agent"],
    ["Transfer-Encoding"],
    ["Connection"],
    ["TE"],
  ])("refuses %s, a header the delivery owns, with 400 and param headers.<name>", async (name) => {
    const response = await create({ url: URL_, headers: { "X-Ok": "1", [name]: "x" } });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: "parameter_invalid", param: `headers.${name}` });
  });

  it.each([
    [{ "Bad Name": "x" }, "headers.Bad Name"],
    [{ "X-A": "line\r\nInjected: 1" }, "headers.X-A"],
    [{ "X-A": "" }, "headers.X-A"],
    [{ "X-A": "tick ✓" }, "headers.X-A"],
    [{ "X-A": "1", "x-a": "2" }, "headers.x-a"],
    [Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, "v"])), "headers"],
  ])("refuses bad headers %j with 400 param %s, and creates nothing", async (headers, param) => {
    const before = (await api.get("/open/v1/webhook-endpoints", { key, query: { limit: 100 } })).body.data
      .length;
    const response = await create({ url: URL_, headers });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: "parameter_invalid", param });
    const after = (await api.get("/open/v1/webhook-endpoints", { key, query: { limit: 100 } })).body.data
      .length;
    expect(after).toBe(before);
  });

  it("merge on update by name, whatever the case: a value sets or replaces, null removes; at most 20 in all", async () => {
    const created = await create({ url: URL_, headers: { "X-Api-Key": "k-1", "X-Team": "crm" } });
    const path = `/open/v1/webhook-endpoints/${created.body.id}`;
    const patch = (headers: unknown) => api.patch(path, { key, body: { headers } });
    const replaced = await patch({ "x-api-key": "k-2", "X-Team": null, "X-New": "n" });
    expect(replaced.status).toBe(200);
    expect(replaced.body.header_names).toEqual(["x-api-key", "X-New"]);
    // The same values again change nothing: no write, the same updated_at.
    const same = await patch({ "x-api-key": "k-2" });
    expect(same.body.updated_at).toBe(replaced.body.updated_at);
    const owned = await patch({ host: "evil.invalid" });
    expect(owned.status).toBe(400);
    expect(owned.body.error).toMatchObject({ code: "parameter_invalid", param: "headers.host" });
    const many = Object.fromEntries(Array.from({ length: 19 }, (_, i) => [`X-H${i}`, "v"]));
    const tooMany = await patch(many);
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error).toMatchObject({ code: "parameter_invalid", param: "headers" });
    expect((await api.get(path, { key })).body.header_names).toEqual(["x-api-key", "X-New"]);
  });
});

describe("rotating the secret", () => {
  it("returns a new secret once; by default the old one stays valid for 24 hours", async () => {
    const created = (await create({ url: URL_ })).body;
    const path = `/open/v1/webhook-endpoints/${created.id}`;
    const rotated = await api.post(`${path}/rotate-secret`, { key });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({ ...toPublic(created), updated_at: rotated.body.updated_at });
    expect(rotated.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(rotated.body.secret).not.toBe(created.secret);
    expect(JSON.stringify((await api.get(path, { key })).body)).not.toContain("whsec_");

    const stored = await storedEndpoint(created.id);
    expect(signingSecrets(stored)).toEqual([rotated.body.secret, created.secret]);
    const graceEnds = stored.secrets[1]?.expires_at?.getTime() ?? 0;
    expect(Math.abs(graceEnds - (Date.now() + 86_400_000))).toBeLessThan(60_000);
    expect(signingSecrets(stored, new Date(graceEnds + 1))).toEqual([rotated.body.secret]);
  });

  it("expires_in sets the grace period; 0 ends it now; a second rotation never lengthens an earlier one", async () => {
    const created = (await create({ url: URL_ })).body;
    const rotate = (body: unknown) =>
      api.post(`/open/v1/webhook-endpoints/${created.id}/rotate-secret`, { key, body });
    const first = await rotate({ expires_in: 3600 });
    const second = await rotate({ expires_in: 7200 });
    const stored = await storedEndpoint(created.id);
    expect(signingSecrets(stored)).toEqual([second.body.secret, first.body.secret, created.secret]);
    const [, firstGrace, originalGrace] = stored.secrets.map((s) => s.expires_at?.getTime() ?? 0);
    expect(Math.abs((firstGrace ?? 0) - (Date.now() + 7_200_000))).toBeLessThan(60_000);
    expect(Math.abs((originalGrace ?? 0) - (Date.now() + 3_600_000))).toBeLessThan(60_000);

    const now = await rotate({ expires_in: 0 });
    expect(now.status).toBe(200);
    expect(signingSecrets(await storedEndpoint(created.id))).toEqual([now.body.secret]);
  });

  it.each([[{ expires_in: -1 }], [{ expires_in: 604_801 }], [{ expires_in: "60" }], [{ grace: 60 }]])(
    "refuses %j with 400 and keeps the secret",
    async (body) => {
      const created = (await create({ url: URL_ })).body;
      const path = `/open/v1/webhook-endpoints/${created.id}/rotate-secret`;
      const response = await api.post(path, { key, body });
      expect(response.status).toBe(400);
      expect(signingSecrets(await storedEndpoint(created.id))).toEqual([created.secret]);
    },
  );
});

describe("scopes and isolation", () => {
  it("every endpoint and event operation needs webhooks:manage", async () => {
    const { id } = (await create({ url: URL_ })).body;
    const weak = await newKey(
      workspaceId,
      ALL_SCOPES.filter((scope) => scope !== "webhooks:manage"),
    );
    const path = `/open/v1/webhook-endpoints/${id}`;
    for (const response of [
      await api.get("/open/v1/webhook-endpoints", { key: weak }),
      await create({ url: URL_ }, weak),
      await api.get(path, { key: weak }),
      await api.patch(path, { key: weak, body: { description: "x" } }),
      await api.post(`${path}/rotate-secret`, { key: weak, body: {} }),
      await api.delete(path, { key: weak }),
      await api.get("/open/v1/events", { key: weak }),
      await api.get("/open/v1/events/evt_0000000000000000000000", { key: weak }),
    ]) {
      expect(response.status).toBe(403);
      expect(response.body.error).toMatchObject({ code: "insufficient_scope" });
      expect(response.body.error.message).toContain("webhooks:manage");
    }
    expect((await api.get(path, { key })).status).toBe(200);
  });

  it("another workspace's endpoint is 404 everywhere and absent from its list", async () => {
    const { key: theirs } = await newWorkspace();
    const theirEndpoint = (await create({ url: URL_, description: "theirs" }, theirs)).body;
    const path = `/open/v1/webhook-endpoints/${theirEndpoint.id}`;
    for (const response of await everyOperationOn(path, { status: "disabled" })) {
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe("resource_missing");
    }
    expect(await walkPages("/open/v1/webhook-endpoints", key, { limit: 100 })).not.toContain(
      theirEndpoint.id,
    );
    const stored = await storedEndpoint(theirEndpoint.id);
    expect(stored.status).toBe("enabled");
    expect(signingSecrets(stored)).toEqual([theirEndpoint.secret]);
  });
});

/** The endpoint as get/list show it: the create answer without its secret. */
function toPublic(created: Record<string, unknown>) {
  const { secret: _secret, ...rest } = created;
  return rest;
}
