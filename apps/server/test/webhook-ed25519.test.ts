import { createPublicKey, randomBytes, verify } from "node:crypto";
import {
  verifySignature,
  verifyStandardWebhook,
  verifyStandardWebhookAsync,
  WebhookVerificationError,
} from "@deskline/webhook-verifier";
import { Webhook } from "standardwebhooks";
import { beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { api, newWorkspace } from "./helpers/api.js";
import { type Deployment, startDeployment } from "./helpers/delivery.js";
import { type ReceivedDelivery, type Receiver, startReceiver } from "./helpers/https-receiver.js";
import { eventually } from "./helpers/main-process.js";

// Endpoints that sign with Ed25519 (`signing: "ed25519"`), end to end: a real server with
// SECRETS_ENCRYPTION_KEY set delivers over HTTPS to receivers on 127.0.0.1, and each delivery is
// checked by node:crypto's own `verify` over the string each scheme signs, with the key decoded
// from the API's `whpk_`, and by the verifier package.

const SLOW = 90_000;
vi.setConfig({ testTimeout: 180_000 });

let deployment: Deployment;
let baseUrl: string;
let key: string;
let workspaceId: string;

beforeAll(async () => {
  deployment = await startDeployment({
    WEBHOOK_TIMEOUT_MS: "3000",
    SECRETS_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
  });
  baseUrl = (await deployment.start("all")).baseUrl;
});

beforeEach(async () => {
  ({ key, workspaceId } = await newWorkspace(undefined, baseUrl));
});

type Endpoint = { id: string; signing: string; public_key: string | null; secret?: string | null };

/** Every answer of the file, to look for a private key in. */
const answers: unknown[] = [];

async function call(method: "get" | "post" | "patch", path: string, body?: object, status = 200) {
  const response = await api[method](path, { key, baseUrl, body });
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  answers.push(response.body);
  return response.body as Endpoint;
}

const create = (receiver: Receiver, body: object = {}) =>
  call("post", "/open/v1/webhook-endpoints", { url: receiver.url, ...body }, 201);

const rotate = (id: string, body: object) =>
  call("post", `/open/v1/webhook-endpoints/${id}/rotate-secret`, body);

/** One event emitted and its delivery, once the receiver has it. */
async function deliveryOf(receiver: Receiver): Promise<ReceivedDelivery> {
  const event = await deployment.emit(workspaceId, "contact.created");
  return eventually(
    async () => receiver.deliveriesOf(event._id)[0],
    (delivery) => delivery !== undefined,
    `a delivery of ${event._id}`,
    SLOW,
  ) as Promise<ReceivedDelivery>;
}

/** The public key of a `whpk_…`, read by node:crypto alone. */
function nodeKey(publicKey: string) {
  const raw = Buffer.from(publicKey.slice("whpk_".length), "base64");
  expect(raw).toHaveLength(32);
  return createPublicKey({
    key: { kty: "OKP", crv: "Ed25519", x: raw.toString("base64url") },
    format: "jwk",
  });
}

/** The items of a header that are `<scheme><separator><value>`. */
const itemsOf = (header: string, scheme: string, separator: string, split: string) =>
  header
    .split(split)
    .map((item) => item.trim())
    .filter((item) => item.startsWith(`${scheme}${separator}`))
    .map((item) => item.slice(scheme.length + separator.length));

const headerOf = (delivery: ReceivedDelivery, name: string) => delivery.headers[name] as string;

/** node:crypto's verdict on every `v1a` of both headers, with `publicKey`, over `body`. */
function nodeVerdicts(delivery: ReceivedDelivery, publicKey: string, body: string): boolean[] {
  const id = headerOf(delivery, "webhook-id");
  const timestamp = headerOf(delivery, "webhook-timestamp");
  const service = headerOf(delivery, "service-signature");
  const t = service.slice(2, service.indexOf(","));
  const check = (message: string, signature: string) =>
    verify(null, Buffer.from(message), nodeKey(publicKey), Buffer.from(signature, "base64"));
  return [
    ...itemsOf(headerOf(delivery, "webhook-signature"), "v1a", ",", " ").map((s) =>
      check(`${id}.${timestamp}.${body}`, s),
    ),
    // Service-Signature's `v1a` signs the same Standard Webhooks string, its `t` the timestamp.
    ...itemsOf(service, "v1a", "=", ",").map((s) => check(`${id}.${t}.${body}`, s)),
  ];
}

function verificationCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError);
    return (error as WebhookVerificationError).code;
  }
  return undefined;
}

describe("an endpoint signing with Ed25519: its key and signatures", () => {
  it("shows its public key, never a secret; its delivery verifies with node:crypto and the package, a tampered one with neither", async () => {
    const receiver = await startReceiver();
    const endpoint = await create(receiver, { signing: "ed25519" });
    expect(endpoint.signing).toBe("ed25519");
    expect(endpoint.public_key).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    expect(endpoint.secret).toBeNull();
    const publicKey = endpoint.public_key as string;
    const shown = await call("get", `/open/v1/webhook-endpoints/${endpoint.id}`);
    expect(shown).toMatchObject({ signing: "ed25519", public_key: publicKey });
    expect(shown).not.toHaveProperty("secret");

    const delivery = await deliveryOf(receiver);
    const body = delivery.body.toString("utf8");
    expect(headerOf(delivery, "webhook-signature")).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/);
    expect(headerOf(delivery, "service-signature")).toMatch(/^t=\d+,v1a=[A-Za-z0-9+/]{86}==$/);
    expect(nodeVerdicts(delivery, publicKey, body)).toEqual([true, true]);
    const standard = {
      "webhook-id": headerOf(delivery, "webhook-id"),
      "webhook-timestamp": headerOf(delivery, "webhook-timestamp"),
      "webhook-signature": headerOf(delivery, "webhook-signature"),
    };
    expect(verifyStandardWebhook(delivery.body, standard, publicKey)).toBe(
      Number(standard["webhook-timestamp"]),
    );
    expect(await verifyStandardWebhookAsync(body, standard, publicKey)).toBe(
      Number(standard["webhook-timestamp"]),
    );
    expect(() =>
      verifySignature(delivery.body, headerOf(delivery, "service-signature"), publicKey),
    ).not.toThrow();

    const tampered = body.replace('"contact.created"', '"contact.updated"');
    expect(tampered).not.toBe(body);
    expect(nodeVerdicts(delivery, publicKey, tampered)).toEqual([false, false]);
    expect(verificationCode(() => verifyStandardWebhook(tampered, standard, publicKey))).toBe(
      "signature_mismatch",
    );
    expect(
      verificationCode(() => verifySignature(tampered, headerOf(delivery, "service-signature"), publicKey)),
    ).toBe("signature_mismatch");
  });
});

describe("an endpoint signing with Ed25519, rotated", () => {
  it("rotates to a new key pair: during the grace each key's v1a is sent, and each verifies", async () => {
    const receiver = await startReceiver();
    const endpoint = await create(receiver, { signing: "ed25519" });
    const rotated = await rotate(endpoint.id, { expires_in: 3600 });
    expect(rotated.signing).toBe("ed25519");
    expect(rotated.secret).toBeNull();
    expect(rotated.public_key).toMatch(/^whpk_/);
    expect(rotated.public_key).not.toBe(endpoint.public_key);

    const during = await deliveryOf(receiver);
    expect(headerOf(during, "webhook-signature").split(" ")).toHaveLength(2);
    for (const publicKey of [endpoint.public_key, rotated.public_key] as string[]) {
      // One of the two signatures in each header is this key's.
      expect(nodeVerdicts(during, publicKey, during.body.toString()).filter(Boolean)).toHaveLength(2);
      expect(() =>
        verifyStandardWebhook(during.body, during.headers as Record<string, string>, publicKey),
      ).not.toThrow();
    }

    const final = await rotate(endpoint.id, { expires_in: 0 });
    const after = await deliveryOf(receiver);
    expect(nodeVerdicts(after, final.public_key as string, after.body.toString())).toEqual([true, true]);
    expect(nodeVerdicts(after, endpoint.public_key as string, after.body.toString())).toEqual([false, false]);
  });

  it("switches scheme at a rotation: the grace carries v1 and v1a, then the new scheme alone", async () => {
    const receiver = await startReceiver();
    const endpoint = await create(receiver);
    expect(endpoint).toMatchObject({ signing: "hmac_sha256", public_key: null });
    expect(endpoint.secret).toMatch(/^whsec_/);
    const switched = await rotate(endpoint.id, { expires_in: 3600, signing: "ed25519" });
    expect(switched).toMatchObject({ signing: "ed25519", secret: null });

    const during = await deliveryOf(receiver);
    const headers = during.headers as Record<string, string>;
    expect(headers["webhook-signature"]?.split(" ").map((item) => item.split(",")[0])).toEqual(["v1a", "v1"]);
    // A receiver still on the secret, with the standardwebhooks library, keeps verifying.
    expect(() =>
      new Webhook(endpoint.secret as string).verify(during.body.toString(), headers),
    ).not.toThrow();
    expect(() =>
      verifySignature(during.body, headers["service-signature"], endpoint.secret as string),
    ).not.toThrow();
    expect(nodeVerdicts(during, switched.public_key as string, during.body.toString())).toEqual([true, true]);

    const back = await rotate(endpoint.id, { expires_in: 0, signing: "hmac_sha256" });
    expect(back).toMatchObject({ signing: "hmac_sha256", public_key: null });
    expect(back.secret).toMatch(/^whsec_/);
    const after = await deliveryOf(receiver);
    expect(after.headers["service-signature"]).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
  });
});

describe("an endpoint signing with Ed25519: refusals, and the private key kept out", () => {
  it("refuses an unknown scheme, on create and on rotate", async () => {
    const receiver = await startReceiver();
    const refused = await api.post("/open/v1/webhook-endpoints", {
      key,
      baseUrl,
      body: { url: receiver.url, signing: "rsa" },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: "parameter_invalid", param: "signing" });
    const endpoint = await create(receiver);
    const rotation = await api.post(`/open/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, {
      key,
      baseUrl,
      body: { signing: "HMAC" },
    });
    expect(rotation.status).toBe(400);
    expect(rotation.body.error).toMatchObject({ code: "parameter_invalid", param: "signing" });
  });

  it("keeps the private key out of every answer, and out of the database in the clear", async () => {
    const receiver = await startReceiver();
    const endpoint = await create(receiver, { signing: "ed25519" });
    await call("patch", `/open/v1/webhook-endpoints/${endpoint.id}`, { description: "keys" });
    await rotate(endpoint.id, { expires_in: 60 });
    await call("get", "/open/v1/webhook-endpoints");
    const replayed = await api.post("/open/v1/webhook-endpoints", {
      key,
      baseUrl,
      body: { url: receiver.url, signing: "ed25519" },
      headers: { "Idempotency-Key": "ed25519-create" },
    });
    const again = await api.post("/open/v1/webhook-endpoints", {
      key,
      baseUrl,
      body: { url: receiver.url, signing: "ed25519" },
      headers: { "Idempotency-Key": "ed25519-create" },
    });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(replayed.body);
    answers.push(replayed.body, again.body);
    expect(JSON.stringify(answers)).not.toContain("whsk_");

    const stored = await deployment.db
      .collection("webhook_endpoints")
      .find({ workspace_id: workspaceId })
      .toArray();
    expect(stored.length).toBeGreaterThan(0);
    for (const doc of stored) {
      for (const entry of doc.secrets as { secret: string; public_key?: string }[]) {
        expect(entry.secret).toMatch(/^enc2:/);
        expect(entry.public_key).toMatch(/^whpk_/);
      }
    }
    // Neither the endpoints nor the kept answers hold a secret key in the clear.
    for (const name of ["webhook_endpoints", "idempotency_keys"]) {
      const docs = await deployment.db.collection(name).find({}).toArray();
      expect(JSON.stringify(docs)).not.toContain("whsk_");
    }
  });
});
