import { readFileSync } from "node:fs";
import { join } from "node:path";
import { verifySignature } from "@deskline/webhook-verifier";
import { BSON, type Db, type Document, type IndexDescription, MongoClient } from "mongodb";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { MIGRATIONS } from "../src/migrations/index.js";
import { migrationKey } from "../src/platform/database/migrations.js";
import { newId } from "../src/platform/ids.js";
import { api, request } from "./helpers/api.js";
import { TEST_DELIVERY_ENV } from "./helpers/delivery.js";
import { relativeToNow } from "./helpers/fixture-times.js";
import { startReceiver } from "./helpers/https-receiver.js";
import { startInProcess } from "./helpers/in-process.js";
import { eventually } from "./helpers/main-process.js";

/**
 * Upgrades as migrations (docs/decisions.md, "Migrations"): the data the server of an earlier
 * release wrote (fixtures/upgrade-from-2a9fceb.json, made by that release's own server through its
 * API: fixtures/make-upgrade-fixture.ts) is loaded, indexes included, into a fresh database; the
 * current server starts on it, runs its migrations, and then every record reads through the API
 * (each answer checked against the spec) and writes.
 */

interface Fixture {
  workspaces: { a: string; b: string };
  keys: { a: string; b: string };
  endpoints: { succeeding: string; failing: string; disabled: string };
  secrets: { succeeding: string };
  collections: Record<
    string,
    { indexes: Array<IndexDescription & { key: Document }>; documents: Document[] }
  >;
}

// Its times moved to now: an idempotency key kept 24 h is still kept, a retry due in an hour is not
// yet due, whatever the day the test runs.
const fixture = relativeToNow(
  BSON.EJSON.parse(readFileSync(join(import.meta.dirname, "fixtures/upgrade-from-2a9fceb.json"), "utf8"), {
    relaxed: false,
  }) as Fixture,
);
const documents = (collection: string) => fixture.collections[collection]?.documents ?? [];

/** Loads the fixture into `db`: its indexes as the old release made them, then its documents. */
async function load(db: Db): Promise<void> {
  for (const [name, { indexes, documents }] of Object.entries(fixture.collections)) {
    await db.createCollection(name);
    for (const { key, ...options } of indexes) await db.collection(name).createIndex(key, options);
    if (documents.length) await db.collection(name).insertMany(documents);
  }
}

let client: MongoClient;
let db: Db;
let baseUrl: string;
const receiver = await startReceiver();

beforeAll(async () => {
  client = await new MongoClient(inject("mongodbUri")).connect();
  db = client.db(`deskline_upgrade_${newId("req")}`);
  await load(db);
  // The current server, as main composes it (in this process), once it delivers.
  const main = await startInProcess(
    loadConfig({
      MONGODB_URI: inject("mongodbUri"),
      MONGODB_DATABASE: db.databaseName,
      ADMIN_TOKEN: inject("adminToken"),
      ROLE: "all",
      ...TEST_DELIVERY_ENV,
    }),
  );
  baseUrl = main.baseUrl;
});
afterAll(() => client?.close());

const as = (workspace: "a" | "b") => ({ baseUrl, key: fixture.keys[workspace] });
const workspaceOf = (doc: Document): "a" | "b" => (doc.workspace_id === fixture.workspaces.a ? "a" : "b");

describe("an upgrade from the data an earlier release wrote: migrations and reads", () => {
  it("runs every migration once, recorded, and leaves no shape of before", async () => {
    const records = await db.collection("migrations").find().sort({ id: 1 }).toArray();
    expect(records.map((record) => record._id)).toEqual(MIGRATIONS.map(migrationKey));
    expect(await db.collection("agenda_jobs").countDocuments({ name: /^webhook-/ })).toBe(0);
    expect(
      await db.collection("webhook_deliveries").countDocuments({ pending_key: { $exists: false } }),
    ).toBe(0);
    // The old release's endpoints had no custom headers; every endpoint now has the field.
    expect(documents("webhook_endpoints").some((endpoint) => "custom_headers" in endpoint)).toBe(false);
    expect(
      await db.collection("webhook_endpoints").countDocuments({ custom_headers: { $type: "array" } }),
    ).toBe(documents("webhook_endpoints").length);
    // Their reasons were sentences; each is its code now (the endpoint the old release paused).
    const paused = documents("webhook_endpoints").filter((endpoint) => endpoint.disabled_reason !== null);
    expect(paused.map((endpoint) => endpoint.disabled_reason)).toEqual(["disabled by the owner"]);
    for (const endpoint of paused) {
      const read = await api.get(`/open/v1/webhook-endpoints/${endpoint._id}`, as(workspaceOf(endpoint)));
      expect(read.body.disabled_reason).toBe("owner");
    }
    const names = async (collection: string) =>
      (await db.collection(collection).listIndexes().toArray()).map((index) => index.name);
    expect(await names("webhook_deliveries")).not.toContain("one_pending");
    expect(await names("delivery_attempts")).not.toContain("one_per_attempt");
    expect(await names("api_keys")).not.toContain("public_id_unique");
  });

  it("reads every record through the API", async () => {
    for (const [collection, path] of [
      ["contacts", "contacts"],
      ["tickets", "tickets"],
      ["conversations", "conversations"],
      ["webhook_endpoints", "webhook-endpoints"],
      ["events", "events"],
    ] as const) {
      for (const doc of documents(collection)) {
        const read = await api.get(`/open/v1/${path}/${doc._id}`, as(workspaceOf(doc)));
        expect(read.status, `${collection} ${doc._id}`).toBe(200);
        expect(read.body.id).toBe(doc._id);
      }
    }
    for (const doc of documents("conversations")) {
      const messages = await api.get(`/open/v1/conversations/${doc._id}/messages`, as(workspaceOf(doc)));
      expect(messages.body.data).toHaveLength(documents("messages").length);
    }
    for (const doc of documents("webhook_endpoints")) {
      const deliveries = await api.get(`/open/v1/webhook-endpoints/${doc._id}/deliveries`, {
        ...as(workspaceOf(doc)),
        query: { limit: 100 },
      });
      const stored = documents("webhook_deliveries").filter((delivery) => delivery.endpoint_id === doc._id);
      const storedIds = new Set(stored.map((d) => d._id as string));
      const listed = deliveries.body.data.map((d: { id: string }) => d.id);
      expect(listed.sort()).toEqual([...storedIds].sort());
      const attempts = await api.get(`/open/v1/webhook-endpoints/${doc._id}/attempts`, {
        ...as(workspaceOf(doc)),
        query: { limit: 100 },
      });
      expect(attempts.status).toBe(200);
    }
    const deleted = documents("tombstones").filter((tombstone) => tombstone.object === "contact");
    for (const tombstone of deleted) {
      expect((await api.get(`/open/v1/contacts/${tombstone._id}`, as("a"))).status).toBe(404);
    }
    const keys = await request("GET", `/admin/v1/workspaces/${fixture.workspaces.a}/api-keys`, {
      baseUrl,
      headers: { Authorization: `Bearer ${inject("adminToken")}` },
    });
    expect(keys.body.data).toHaveLength(
      documents("api_keys").filter((key) => workspaceOf(key) === "a").length,
    );
  });
});

describe("an upgrade from the data an earlier release wrote: writes and deliveries", () => {
  it("writes: updates and deletes records, keeps emails unique per workspace, replays a stored answer", async () => {
    for (const doc of documents("contacts")) {
      const patched = await api.patch(`/open/v1/contacts/${doc._id}`, {
        ...as(workspaceOf(doc)),
        body: { tags: ["upgraded"] },
      });
      expect(patched.status, doc._id).toBe(200);
    }
    const ada = documents("contacts").find(
      (doc) => doc.email === "ada@example.com" && workspaceOf(doc) === "a",
    );
    const taken = await api.post("/open/v1/contacts", {
      ...as("a"),
      body: { name: "Ada again", email: "ada@example.com" },
    });
    expect(taken.status).toBe(409);
    expect(taken.body.error.message).toContain(ada?._id);
    // Contacts without an email or external id do not collide on "no key" (the index is sparse).
    for (const name of ["Keyless 1", "Keyless 2"]) {
      expect((await api.post("/open/v1/contacts", { ...as("a"), body: { name } })).status).toBe(201);
    }
    const ticket = documents("tickets")[0] as Document;
    const solved = await api.patch(`/open/v1/tickets/${ticket._id}`, {
      ...as("a"),
      body: { status: "Solved" },
    });
    expect(solved.body.status).toBe("Solved");
    expect((await db.collection("tickets").findOne({ _id: ticket._id }))?.version).toBe(ticket.version + 1);
    const doomed = documents("contacts").find((doc) => doc.name === "No Email") as Document;
    expect((await api.delete(`/open/v1/contacts/${doomed._id}`, as("a"))).status).toBe(200);
    expect((await api.get(`/open/v1/contacts/${doomed._id}`, as("a"))).status).toBe(404);
    // The old release's stored answer to an idempotent create is replayed, not run again.
    const [, replayedKey] = String(documents("idempotency_keys")[0]?._id).split(":");
    const replay = await api.post("/open/v1/contacts", {
      ...as("a"),
      body: { name: "Idempotent" },
      headers: { "Idempotency-Key": replayedKey as string },
    });
    expect(replay.status).toBe(201);
    expect(documents("contacts").map((doc) => doc._id)).toContain(replay.body.id);
  });

  it("delivers to an endpoint the old release registered, signed with its stored secret", async () => {
    const endpoint = fixture.endpoints.succeeding;
    const moved = await api.patch(`/open/v1/webhook-endpoints/${endpoint}`, {
      ...as("a"),
      body: { url: receiver.url },
    });
    expect(moved.status).toBe(200);
    const event = documents("events").find((doc) => doc.workspace_id === fixture.workspaces.a) as Document;
    const resent = await api.post(`/open/v1/events/${event._id}/resend`, { ...as("a"), body: {} });
    expect(resent.status).toBeLessThan(300);
    const [delivery] = await eventually(
      async () => receiver.deliveriesOf(event._id),
      (found) => found.length > 0,
      "the resent delivery",
    );
    expect(() =>
      verifySignature(
        delivery?.body as Buffer,
        delivery?.headers["service-signature"] as string,
        fixture.secrets.succeeding,
      ),
    ).not.toThrow();
  });
});
