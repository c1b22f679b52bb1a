import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import { SecretsAtRest } from "../src/webhooks/endpoints/secrets/at-rest.js";
import type { WebhookEndpointDoc } from "../src/webhooks/endpoints/store.js";

import { api, newWorkspace } from "./helpers/api.js";
import { runDatabase } from "./helpers/database.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

/** The test servers run without SECRETS_ENCRYPTION_KEY: secrets are stored as they are. */
const plaintext = new SecretsAtRest();
const signingSecrets = (doc: WebhookEndpointDoc, now?: Date) => plaintext.signingSecrets(doc, now);

// The bounds on what one workspace can grow (docs/operations.md "Limits"), on a server of their
// own with small settings over the run's database: endpoints per workspace, live signing secrets
// per endpoint. (Recoveries per endpoint: webhook-recovery.test.ts.)

const database = runDatabase();
let server: TestServer;
let baseUrl: string;
beforeAll(async () => {
  server = await startTestServer({
    mongodbUri: inject("mongodbUri"),
    databaseName: inject("databaseName"),
    config: { limits: { endpointsPerWorkspace: 3, secretsPerEndpoint: 3, recoveriesPerEndpoint: 1 } },
  });
  baseUrl = server.baseUrl;
});
afterAll(() => server?.stop());

const URL_ = "https://hooks.example.invalid/limits";

describe("WEBHOOK_ENDPOINTS_PER_WORKSPACE", () => {
  it("refuses one endpoint too many with 409 webhook_endpoint_limit_reached, writing nothing; a delete makes room", async () => {
    const { key, workspaceId } = await newWorkspace(undefined, baseUrl);
    const create = () => api.post("/open/v1/webhook-endpoints", { key, baseUrl, body: { url: URL_ } });
    const made = [];
    for (let i = 0; i < 3; i++) {
      const created = await create();
      expect(created.status).toBe(201);
      made.push(created.body.id as string);
    }
    const refused = await create();
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({
      type: "invalid_request_error",
      code: "webhook_endpoint_limit_reached",
    });
    expect(refused.body.error.message).toContain("3 webhook endpoints");
    expect(refused.body.error.message).toContain("WEBHOOK_ENDPOINTS_PER_WORKSPACE");
    const stored = (await database()).collection<WebhookEndpointDoc>("webhook_endpoints");
    expect(await stored.countDocuments({ workspace_id: workspaceId })).toBe(3);

    // Another workspace has its own count.
    const other = await newWorkspace(undefined, baseUrl);
    expect(
      (await api.post("/open/v1/webhook-endpoints", { key: other.key, baseUrl, body: { url: URL_ } })).status,
    ).toBe(201);

    expect((await api.delete(`/open/v1/webhook-endpoints/${made[0]}`, { key, baseUrl })).status).toBe(200);
    // Racing creates for the one free place: never more than the limit.
    const racing = await Promise.all([create(), create(), create(), create()]);
    for (const r of racing) expect([201, 409]).toContain(r.status);
    expect(await stored.countDocuments({ workspace_id: workspaceId })).toBeLessThanOrEqual(3);
  });
});

describe("WEBHOOK_SECRETS_PER_ENDPOINT", () => {
  it("a rotation past the limit ends the oldest grace periods now, so deliveries carry at most that many signatures", async () => {
    const { key } = await newWorkspace(undefined, baseUrl);
    const created = await api.post("/open/v1/webhook-endpoints", { key, baseUrl, body: { url: URL_ } });
    const secrets = [created.body.secret as string];
    for (let i = 0; i < 4; i++) {
      const rotated = await api.post(`/open/v1/webhook-endpoints/${created.body.id}/rotate-secret`, {
        key,
        baseUrl,
        body: { expires_in: 3600 },
      });
      expect(rotated.status).toBe(200);
      secrets.unshift(rotated.body.secret);
    }
    const stored = await (await database())
      .collection<WebhookEndpointDoc>("webhook_endpoints")
      .findOne({ _id: created.body.id });
    expect(stored?.secrets).toHaveLength(3);
    expect(signingSecrets(stored as WebhookEndpointDoc)).toEqual(secrets.slice(0, 3));
  });
});

describe("the limits' settings", () => {
  it("default to 100 endpoints, 5 live secrets, 1 recovery at a time; more than 16 secrets is refused", () => {
    expect(loadConfig({}).limits).toEqual({
      endpointsPerWorkspace: 100,
      secretsPerEndpoint: 5,
      recoveriesPerEndpoint: 1,
    });
    expect(
      loadConfig({
        WEBHOOK_ENDPOINTS_PER_WORKSPACE: "7",
        WEBHOOK_SECRETS_PER_ENDPOINT: "16",
        WEBHOOK_RECOVERIES_PER_ENDPOINT: "2",
      }).limits,
    ).toEqual({ endpointsPerWorkspace: 7, secretsPerEndpoint: 16, recoveriesPerEndpoint: 2 });
    expect(() => loadConfig({ WEBHOOK_SECRETS_PER_ENDPOINT: "17" })).toThrow(ConfigError);
    expect(() => loadConfig({ WEBHOOK_ENDPOINTS_PER_WORKSPACE: "0" })).toThrow(ConfigError);
  });
});
