import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { verifySignature } from "@deskline/webhook-verifier";
import { type Db, MongoClient } from "mongodb";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { loadConfig } from "../src/config.js";
import { DatabaseUnavailableError } from "../src/platform/errors.js";
import { newId } from "../src/platform/ids.js";
import { keyIdOf, SecretBox } from "../src/platform/secret-box.js";
import { SecretsAtRest } from "../src/webhooks/endpoints/secrets/at-rest.js";
import { WebhookEndpoints } from "../src/webhooks/endpoints/store.js";
import { api, newWorkspace, request } from "./helpers/api.js";
import { startReceiver, testCertificate } from "./helpers/https-receiver.js";
import { type InProcessServer, startInProcess } from "./helpers/in-process.js";
import { eventually, MAIN_ENTRY, startMain } from "./helpers/main-process.js";
import { type Finished, runToEnd } from "./helpers/server-process.js";

// Signing secrets at rest, with real servers (in this process; a start that must be refused, and
// the commands, as processes: their exit codes are what they say) on one persistent database (the run's
// database server, a database of this file's own): a plaintext secret stops a start with a key
// until `reencrypt-secrets` seals it, new ones are stored sealed, deliveries still sign with the
// real secret, custom header values are sealed alike and still sent, idempotent replays keep no key or secret in the clear (the database is searched
// for each one after every operation that returns one), a rotation to a new key works with the
// old one in SECRETS_ENCRYPTION_OLD_KEYS and `reencrypt-secrets`, and a key that cannot open
// what is stored stops the server.

vi.setConfig({ testTimeout: 120_000 });

const databaseName = `deskline_secrets_${newId("req")}`;
const newKey = () => randomBytes(32).toString("base64");
const KEY_1 = newKey();
const KEY_2 = newKey();
const certificate = testCertificate();

let client: MongoClient;
let db: Db;
// The start-up check's test's own: the tests beside it find every secret stored in `db`.
let heldDb: Db;
beforeAll(async () => {
  client = await new MongoClient(inject("mongodbUri")).connect();
  db = client.db(databaseName);
  heldDb = client.db(`${databaseName}_held`);
});
afterAll(async () => {
  await db.dropDatabase().catch(() => {});
  await heldDb.dropDatabase().catch(() => {});
  await client.close();
});

function env(extra: Record<string, string>): Record<string, string> {
  return {
    MONGODB_URI: inject("mongodbUri"),
    MONGODB_DATABASE: databaseName,
    ADMIN_TOKEN: inject("adminToken"), // so the helpers' admin calls work on these servers too
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    NODE_EXTRA_CA_CERTS: certificate.certFile,
    WEBHOOK_POLL_INTERVAL_MS: "50",
    SECRETS_ENCRYPTION_KEY: "",
    SECRETS_ENCRYPTION_OLD_KEYS: "",
    ...extra,
  };
}

/** A server on this file's database, once it has dealt with the stored secrets. */
async function server(extra: Record<string, string>): Promise<InProcessServer & { url: string }> {
  const started = await startInProcess(loadConfig(env(extra)));
  return Object.assign(started, { url: started.baseUrl });
}

async function stop(running: InProcessServer): Promise<void> {
  await running.stop();
}

/** A server that must refuse to start: its exit code and what it said. */
async function refusedStart(extra: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const main = startMain(env(extra));
  const started = main.logged(/delivering webhooks/).then(
    () => "started",
    () => "exited",
  );
  if ((await Promise.race([main.exited.then(() => "exited"), started])) === "started") {
    main.child.kill("SIGTERM");
    await main.exited;
    throw new Error(`the server started, but should have refused to: ${main.output()}`);
  }
  return { code: await main.exited, output: main.output() };
}

/** Every string value anywhere in every collection of the database that contains `needle`. */
async function findEverywhere(needle: string): Promise<string[]> {
  const found: string[] = [];
  const walk = (value: unknown, where: string) => {
    if (typeof value === "string" && value.includes(needle)) found.push(where);
    else if (Array.isArray(value)) {
      for (const [i, item] of value.entries()) walk(item, `${where}.${i}`);
    } else if (value && typeof value === "object" && !(value instanceof Date)) {
      for (const [k, v] of Object.entries(value)) walk(v, `${where}.${k}`);
    }
  };
  const collections = await db.listCollections().toArray();
  expect(collections.length).toBeGreaterThan(5);
  for (const { name } of collections) {
    for await (const doc of db.collection(name).find({})) walk(doc, `${name}/${String(doc._id)}`);
  }
  return found;
}

/** Every stored signing secret value: endpoints' and stored replays'. */
async function storedSecretValues(): Promise<string[]> {
  const endpoints = await db.collection("webhook_endpoints").find({}).toArray();
  const replays = await db
    .collection("idempotency_keys")
    .find({
      $or: [{ "response.body.secret": { $exists: true } }, { "response.body.key": { $exists: true } }],
    })
    .toArray();
  return [
    ...endpoints.flatMap((e) => (e.secrets as { secret: string }[]).map((s) => s.secret)),
    ...replays.map((r) => (r.response.body.secret ?? r.response.body.key) as string),
    ...endpoints.flatMap((e) => ((e.custom_headers ?? []) as { value: string }[]).map((h) => h.value)),
  ];
}

const sealedUnder = (key: string) => new RegExp(`^enc2:${keyIdOf(Buffer.from(key, "base64"))}:`);

/** The database holds `value` nowhere, in no collection (a key or secret just returned). */
async function expectNowhere(value: string): Promise<void> {
  expect(value.length).toBeGreaterThan(20);
  expect(await findEverywhere(value)).toEqual([]);
}

/** `createApiKey` with an Idempotency-Key, on `baseUrl`: the first answer and its replay. */
async function createKeyTwice(baseUrl: string, workspaceId: string) {
  const idempotencyKey = `key-${newId("req")}`;
  const once = () =>
    request("POST", `/admin/v1/workspaces/${workspaceId}/api-keys`, {
      baseUrl,
      body: { name: "replayed", scopes: ["contacts:read"] },
      headers: { Authorization: `Bearer ${inject("adminToken")}`, "Idempotency-Key": idempotencyKey },
    });
  const first = await once();
  expect(first.status).toBe(201);
  return { first, replay: await once() };
}

// The tests below run in order on one database and share its workspace and the endpoints they
// made: each later one replays what the earlier ones created.
let key: string;
let workspaceId: string;
const made: Array<{ id: string; secret: string; idempotencyKey: string; body: unknown }> = [];

const createEndpoint = async (baseUrl: string, url: string) => {
  const idempotencyKey = `create-${made.length}-${randomBytes(4).toString("hex")}`;
  // A custom header whose value is as secret as the signing secret (hdrval_…, found nowhere).
  const body = { url, events: ["contact.created"], headers: { "X-Api-Key": `hdrval_${made.length}` } };
  const created = await api.post("/open/v1/webhook-endpoints", {
    baseUrl,
    key,
    body,
    headers: { "Idempotency-Key": idempotencyKey },
  });
  expect(created.status).toBe(201);
  made.push({ id: created.body.id, secret: created.body.secret, idempotencyKey, body });
  return created.body as { id: string; secret: string };
};

const replay = (baseUrl: string, m: (typeof made)[number]) =>
  api.post("/open/v1/webhook-endpoints", {
    baseUrl,
    key,
    body: m.body,
    headers: { "Idempotency-Key": m.idempotencyKey },
  });

// The chain's blocks run in order, each reading what the one before stored in `db`; the chain and
// the start-up check's test (on `heldDb`, mostly waiting out its 5 s) share nothing, and run at once.
describe.concurrent("signing secrets at rest, from the clear to a new key", () => {
  describe.sequential("signing secrets at rest: stored in the clear, then sealed", storedInTheClear);
  describe.sequential("signing secrets at rest: sealed under a key", sealedUnderAKey);
  describe.sequential(
    "signing secrets at rest: a key that cannot open them, and a new key",
    openedWithANewKey,
  );
});

function storedInTheClear() {
  it("without a key: runs as before, and says once that secrets are stored in the clear", async ({
    expect,
  }) => {
    const main = await server({});
    ({ key, workspaceId } = await newWorkspace(undefined, main.url));
    await createEndpoint(main.url, "https://plain.example.invalid/hooks");
    expect(main.output().match(/stored in the clear/g)).toHaveLength(1);
    // An API key is kept nowhere but as a hash: without a key to seal it, its replay is refused.
    const { first, replay } = await createKeyTwice(main.url, workspaceId);
    await expectNowhere(first.body.key);
    expect(replay.status).toBe(409);
    expect(replay.body.error).toMatchObject({
      code: "idempotency_replay_unavailable",
      param: "Idempotency-Key",
    });
    expect(replay.body.error.message).toContain(first.body.id);
    await stop(main);
    expect((await findEverywhere("whsec_")).length).toBeGreaterThan(0);
    expect((await findEverywhere("hdrval_")).length).toBeGreaterThan(0);
  });

  it("with a key: a secret stored in the clear stops the start, until reencrypt-secrets seals it", async ({
    expect,
  }) => {
    const refused = await refusedStart({ SECRETS_ENCRYPTION_KEY: KEY_1 });
    expect(refused.code).toBe(1);
    expect(refused.output).toContain("stored unsealed");
    expect(refused.output).toContain("deskline-server reencrypt-secrets");
    const sealed = await runCommand(["reencrypt-secrets"], { SECRETS_ENCRYPTION_KEY: KEY_1 });
    expect(sealed.code, sealed.output).toBe(0);
    // The endpoint's secret and custom header value, and its replay's secret.
    expect(sealed.output).toContain("re-encrypted 3 webhook signing secret(s)");
    expect(await findEverywhere("whsec_")).toEqual([]);
    expect(await findEverywhere("hdrval_")).toEqual([]);
  });
}

function sealedUnderAKey() {
  it("with a key: creates, rotations, key issues, replays and deliveries leave no key or secret anywhere", async ({
    expect,
  }) => {
    const main = await server({ SECRETS_ENCRYPTION_KEY: KEY_1 });
    const receiver = await startReceiver();
    const endpoint = await createEndpoint(main.url, receiver.url);
    await expectNowhere(endpoint.secret);
    const rotated = await api.post(`/open/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, {
      baseUrl: main.url,
      key,
      body: { expires_in: 3600 },
      headers: { "Idempotency-Key": `rotate-${endpoint.id}` },
    });
    expect(rotated.status).toBe(200);
    await expectNowhere(rotated.body.secret);
    const { first, replay: keyReplay } = await createKeyTwice(main.url, workspaceId);
    expect(keyReplay.status).toBe(201);
    expect(keyReplay.headers.get("idempotent-replayed")).toBe("true");
    expect(keyReplay.body).toEqual(first.body);
    await expectNowhere(first.body.key);
    for (const m of made) {
      const again = await replay(main.url, m);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(again.body.secret).toBe(m.secret);
    }

    // A delivery is signed with both secrets in their plaintext: the seal opens to the real one.
    const contact = await api.post("/open/v1/contacts", {
      baseUrl: main.url,
      key,
      body: { name: "Sealed" },
    });
    expect(contact.status).toBe(201);
    const [delivery] = await eventually(
      async () => receiver.received,
      (received) => received.length > 0,
      "a delivery",
    );
    const header = delivery?.headers["service-signature"] as string;
    for (const secret of [rotated.body.secret, endpoint.secret]) {
      expect(() => verifySignature(delivery?.body as Buffer, header, secret)).not.toThrow();
    }
    // Its custom header arrives opened: the value it was given.
    expect(delivery?.headers["x-api-key"]).toBe(`hdrval_${made.length - 1}`);
    await stop(main);

    expect(await findEverywhere("whsec_")).toEqual([]);
    expect(await findEverywhere("hdrval_")).toEqual([]);
    expect(await findEverywhere("dsk_")).toEqual([]);
    const values = await storedSecretValues();
    expect(values.length).toBeGreaterThanOrEqual(6);
    for (const value of values) expect(value).toMatch(sealedUnder(KEY_1));
    expect(workspaceId).toBeTruthy();
  });
}

function openedWithANewKey() {
  it("a key that cannot decrypt what is stored, or no key at all, stops the server at start", async ({
    expect,
  }) => {
    const wrong = await refusedStart({ SECRETS_ENCRYPTION_KEY: newKey() });
    expect(wrong.code).toBe(1);
    expect(wrong.output).toContain(
      "SECRETS_ENCRYPTION_KEY cannot decrypt the stored webhook signing secrets",
    );
    expect(wrong.output).not.toContain("delivering webhooks");

    const none = await refusedStart({});
    expect(none.code).toBe(1);
    expect(none.output).toContain("webhook signing secrets are encrypted");
    expect(none.output).toContain("SECRETS_ENCRYPTION_KEY is not set");

    const malformed = await refusedStart({ SECRETS_ENCRYPTION_KEY: "too-short" });
    expect(malformed.code).toBe(1);
    expect(malformed.output).toContain("configuration error: SECRETS_ENCRYPTION_KEY must be 32 random bytes");
    // Nothing was touched: everything is still under the first key.
    for (const value of await storedSecretValues()) expect(value).toMatch(sealedUnder(KEY_1));
  });

  it("rotates to a new key: the old one in SECRETS_ENCRYPTION_OLD_KEYS, then reencrypt-secrets moves every secret", async ({
    expect,
  }) => {
    const during = await server({ SECRETS_ENCRYPTION_KEY: KEY_2, SECRETS_ENCRYPTION_OLD_KEYS: KEY_1 });
    expect(during.output()).toMatch(/some are under an older key/);
    const added = await createEndpoint(during.url, "https://rotated.example.invalid/hooks");
    for (const m of made) expect((await replay(during.url, m)).body.secret).toBe(m.secret);
    await stop(during);

    const command = await runCommand(["reencrypt-secrets"], {
      SECRETS_ENCRYPTION_KEY: KEY_2,
      SECRETS_ENCRYPTION_OLD_KEYS: KEY_1,
    });
    expect(command.code, command.output).toBe(0);
    expect(command.output).toMatch(/re-encrypted \d+ webhook signing secret/);
    for (const value of await storedSecretValues()) expect(value).toMatch(sealedUnder(KEY_2));
    expect(await findEverywhere("whsec_")).toEqual([]);
    expect(await findEverywhere("hdrval_")).toEqual([]);

    // Again: nothing left to move.
    const again = await runCommand(["reencrypt-secrets"], { SECRETS_ENCRYPTION_KEY: KEY_2 });
    expect(again.output).toContain("re-encrypted 0 webhook signing secret(s)");

    // The old key can go now; and it alone no longer opens anything.
    const after = await server({ SECRETS_ENCRYPTION_KEY: KEY_2 });
    for (const m of made) expect((await replay(after.url, m)).body.secret).toBe(m.secret);
    expect(made.at(-1)?.id).toBe(added.id);
    await stop(after);
    const oldOnly = await refusedStart({ SECRETS_ENCRYPTION_KEY: KEY_1 });
    expect(oldOnly.code).toBe(1);
    expect(oldOnly.output).toContain("SECRETS_ENCRYPTION_KEY cannot decrypt");
  });
}

describe.concurrent("while the start-up check of the stored secrets runs", () => {
  it("creates wait for it, and answer 503 (DatabaseUnavailableError) if it takes over 5 s", async ({
    expect,
  }) => {
    const secrets = new SecretsAtRest(new SecretBox(Buffer.from(KEY_1, "base64")));
    const endpoints = new WebhookEndpoints(heldDb, secrets);
    const release = secrets.holdWrites();
    let done = false;
    const creating = endpoints.create("ws_held", { url: "https://held.example.invalid/x" }).finally(() => {
      done = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(done).toBe(false);
    release();
    const { doc, secret } = await creating;
    expect(secret).toMatch(/^whsec_/);
    expect(doc.secrets[0]?.secret).toMatch(sealedUnder(KEY_1));

    secrets.holdWrites(); // never released: the check is stuck (the database went away)
    const started = Date.now();
    await expect(endpoints.create("ws_held", { url: "https://held.example.invalid/y" })).rejects.toThrow(
      DatabaseUnavailableError,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(4_900);
  });
});

/** `deskline-server <args>` from the checkout, as docs/operations.md shows it. */
function runCommand(args: string[], extra: Record<string, string>): Promise<Finished> {
  return runToEnd(process.execPath, [...MAIN_ENTRY, ...args], {
    cwd: join(import.meta.dirname, ".."),
    env: { ...process.env, ...env(extra), LOG_LEVEL: "warn" },
  });
}
