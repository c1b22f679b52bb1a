import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { admin, api, newKey, newWorkspace } from "./helpers/api.js";
import {
  createEndpoint,
  type Deployment,
  type InProcessServer,
  startDeployment,
} from "./helpers/delivery.js";
import { type Receiver, startReceiver } from "./helpers/https-receiver.js";
import { eventually } from "./helpers/main-process.js";

// Erasing a contact (`eraseContact`, contacts/erase.ts), end to end: a real server and worker on a
// database of the test's own deliver over HTTPS to a receiver on 127.0.0.1 that echoes every
// body back (so the attempts keep the data in their stored answers); after the erasure, every
// document of every collection of that database is read and none holds the person's values.

vi.setConfig({ testTimeout: 120_000 });

type Json = Record<string, any>;

// Distinctive values, looked for case-insensitively in everything stored.
const PERSON = {
  name: "Zebulon Quixwright-Erasmo",
  email: "Zeb.Quixwright.Erasure@Example.test",
  phone: "+1 555 019 7313",
};
const NEW_EMAIL = "zebulon.q.second@example.test";
// The phone is stored as given and in E.164 (docs/decisions.md, "Phones in E.164"): both are looked for.
const PHONE_E164 = "+15550197313";
const NEEDLES = [PERSON.name, PERSON.email, PERSON.phone, PHONE_E164, NEW_EMAIL].map((n) => n.toLowerCase());

let deployment: Deployment;
let server: InProcessServer;
let baseUrl: string;
let key: string;
let workspaceId: string;
let receiver: Receiver;

beforeAll(async () => {
  deployment = await startDeployment({ WEBHOOK_TIMEOUT_MS: "3000" });
  server = await deployment.start("all");
  baseUrl = server.baseUrl;
  ({ key, workspaceId } = await newWorkspace(undefined, baseUrl));
  receiver = await startReceiver();
  // Echo what was sent: the attempt keeps the start of the answer, the person's data included.
  receiver.answer = (delivery) => ({
    status: 200,
    headers: { "content-type": "application/json" },
    body: delivery.body,
  });
  await createEndpoint({ key, baseUrl }, receiver.url);
});
afterAll(() => receiver?.close());

const call = async (method: "get" | "post" | "patch" | "delete", path: string, options: Json = {}) =>
  api[method](path, { key, baseUrl, ...options });

const erase = (id: string, options: Json = {}) => call("post", `/open/v1/contacts/${id}/erase`, options);

/** The events of the workspace about a resource, oldest first. */
async function eventsAbout(id: string): Promise<Json[]> {
  const listed = await call("get", "/open/v1/events", { query: { limit: 100 } });
  expect(listed.status).toBe(200);
  return (listed.body.data as Json[]).filter((event) => event.data.id === id).reverse();
}

/** Each stored document of every collection of the deployment's database that holds a needle. */
async function documentsHolding(needles: string[]): Promise<string[]> {
  const found: string[] = [];
  for (const { name } of await deployment.db.listCollections().toArray()) {
    for (const doc of await deployment.db.collection(name).find({}).toArray()) {
      const text = JSON.stringify(doc).toLowerCase();
      const held = needles.filter((needle) => text.includes(needle));
      if (held.length) found.push(`${name} ${String(doc._id)}: ${held.join(", ")}`);
    }
  }
  return found;
}

const parsed = (body: Buffer) => JSON.parse(body.toString()) as Json;

const idempotencyKey = "erase-test-create";

/** The person as a contact with a history: created under an idempotency key, its email changed, a ticket and a conversation about it. */
async function personWithHistory(): Promise<{ id: string; ticketId: string }> {
  const created = await call("post", "/open/v1/contacts", {
    body: PERSON,
    headers: { "Idempotency-Key": idempotencyKey },
  });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  expect((await call("patch", `/open/v1/contacts/${id}`, { body: { email: NEW_EMAIL } })).status).toBe(200);
  const ticket = await call("post", "/open/v1/tickets", {
    body: { subject: "Printer jam", contact_id: id },
  });
  expect(ticket.status).toBe(201);
  const conversation = await admin(
    "POST",
    `/admin/v1/workspaces/${workspaceId}/conversations`,
    { contact_id: id, channel: "email", message: { body: "The printer jams again." } },
    baseUrl,
  );
  expect(conversation.status).toBe(201);
  return { id, ticketId: ticket.body.id as string };
}

/** What receivers get after the erasure: the contact.erased event, and the marker on a resend. */
async function expectReceiversGetTheMarker(erasedEventId: string, createdEventId: string, erased: Json) {
  // Receivers are told to erase their copy.
  const told = await eventually(
    async () => receiver.deliveriesOf(erasedEventId),
    (deliveries) => deliveries.length === 1,
    "contact.erased delivered",
  );
  expect(told[0]?.headers["service-event"]).toBe("contact.erased");
  expect(parsed(told[0]?.body as Buffer).data).toEqual(erased);

  // A resend of the old event delivers the marker, not the data.
  const resent = await call("post", `/open/v1/events/${createdEventId}/resend`, { body: {} });
  expect(resent.status).toBe(202);
  const redelivered = await eventually(
    async () => receiver.deliveriesOf(createdEventId),
    (deliveries) => deliveries.length === 2,
    "the resend",
  );
  const body = String(redelivered[1]?.body);
  expect(JSON.parse(body).data).toEqual(erased);
  for (const needle of NEEDLES) expect(body.toLowerCase()).not.toContain(needle);
}

/** The audit line: ids and counts, never the data. */
function expectAuditWithoutData(id: string) {
  const audit = server
    .output()
    .split("\n")
    .find((line) => line.includes('"contact erased"') && line.includes(id));
  expect(JSON.parse(audit as string)).toMatchObject({
    workspace_id: workspaceId,
    contact_id: id,
    removed: true,
    scrubbed: { events: 2, attempts: expect.any(Number), idempotency_keys: 1 },
  });
  for (const needle of NEEDLES) expect(server.output().toLowerCase()).not.toContain(needle);
}

describe("eraseContact of a person with a history", () => {
  it("removes the person's data from every collection, and resends the marker", async () => {
    const { id, ticketId } = await personWithHistory();
    const [createdEvent, updatedEvent] = await eventsAbout(id);
    expect(createdEvent?.type).toBe("contact.created");
    expect(updatedEvent?.type).toBe("contact.updated");
    // Delivered, and the echoes kept with the attempts: the data is in the database now.
    await eventually(
      () => documentsHolding(NEEDLES),
      (found) => found.filter((where) => where.startsWith("delivery_attempts")).length >= 2,
      "the receiver's echoes kept with the attempts",
    );
    expect((await documentsHolding(NEEDLES)).length).toBeGreaterThan(0);

    const erased = await erase(id);
    expect(erased.status).toBe(200);
    expect(erased.body).toEqual({ id, object: "contact", erased: true, erased_at: expect.any(String) });

    // Nothing of the person is left anywhere the server stores.
    expect(await documentsHolding(NEEDLES)).toEqual([]);
    expect((await call("get", `/open/v1/contacts/${id}`)).status).toBe(404);
    // The ticket and the conversation still name it by id.
    expect((await call("get", `/open/v1/tickets/${ticketId}`)).body.contact_id).toBe(id);

    // The event log keeps ids, types and times; the data is the marker.
    const after = await eventsAbout(id);
    expect(after.map((event) => [event.id, event.type, event.created])).toEqual([
      [createdEvent?.id, "contact.created", createdEvent?.created],
      [updatedEvent?.id, "contact.updated", updatedEvent?.created],
      [expect.any(String), "contact.erased", expect.any(Number)],
    ]);
    for (const event of after) expect(event.data).toEqual(erased.body);
    expect(after[1]?.previous_attributes).toEqual({});

    await expectReceiversGetTheMarker(after[2]?.id as string, createdEvent?.id as string, erased.body);

    // The stored answer of the create is gone: its replay is refused, and runs nothing again.
    const replay = await call("post", "/open/v1/contacts", {
      body: PERSON,
      headers: { "Idempotency-Key": idempotencyKey },
    });
    expect(replay.status).toBe(409);
    expect(replay.body.error.code).toBe("idempotency_replay_unavailable");

    expectAuditWithoutData(id);

    // Once more: the same answer, and nothing more happens (no second contact.erased).
    const again = await erase(id);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(erased.body);
    expect((await eventsAbout(id)).map((event) => event.type)).toEqual([
      "contact.created",
      "contact.updated",
      "contact.erased",
    ]);
  });
});

describe("eraseContact of a deleted contact, during a retry, and refused", () => {
  it("erases a contact deleted earlier: its copies are scrubbed all the same", async () => {
    const name = "Quillon Deleted-Before";
    const created = await call("post", "/open/v1/contacts", { body: { name } });
    const id = created.body.id as string;
    expect((await call("delete", `/open/v1/contacts/${id}`)).status).toBe(200);
    expect(await documentsHolding([name.toLowerCase()])).not.toEqual([]);

    const erased = await erase(id);
    expect(erased.status).toBe(200);
    expect(await documentsHolding([name.toLowerCase()])).toEqual([]);
    expect((await eventsAbout(id)).map((event) => [event.type, event.data])).toEqual([
      ["contact.created", erased.body],
      ["contact.erased", erased.body],
    ]);
  });

  it("a retry after the erasure sends the marker: only a first attempt reads the fan-out's bytes", async () => {
    const name = "Rowena Retry-After-Erasure";
    const echo = receiver.answer;
    // The first delivery of its creation is held open across the erasure, then failed.
    receiver.answer = (delivery, index) =>
      delivery.body.toString().includes(name) ? "hang" : echo(delivery, index);
    try {
      const id = (await call("post", "/open/v1/contacts", { body: { name } })).body.id as string;
      const [first] = await eventually(
        async () => receiver.inFlight().filter((d) => d.body.toString().includes(name)),
        (held) => held.length === 1,
        "the first attempt, held",
      );
      const erased = await erase(id);
      expect(erased.status).toBe(200);
      receiver.release(500);
      const [, retry] = await eventually(
        async () => receiver.deliveriesOf(first?.eventId as string),
        (deliveries) => deliveries.length === 2,
        "the retry",
      );
      expect(parsed(retry?.body as Buffer).data).toEqual(erased.body);
      expect(retry?.body.toString()).not.toContain(name);
    } finally {
      receiver.answer = echo;
    }
  });

  it("is 404 for an id the workspace never had, and 403 for a key without contacts:write", async () => {
    const unknown = await erase("con_0000000000000000");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("resource_missing");

    const id = (await call("post", "/open/v1/contacts", { body: { name: "Kept Person" } })).body.id as string;
    const readOnly = await newKey(workspaceId, ["contacts:read"], baseUrl);
    const refused = await api.post(`/open/v1/contacts/${id}/erase`, { key: readOnly, baseUrl });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: "insufficient_scope" });
    expect((await call("get", `/open/v1/contacts/${id}`)).status).toBe(200);

    // Another workspace's contact is exactly as missing.
    const other = await newWorkspace(undefined, baseUrl);
    const foreign = await api.post(`/open/v1/contacts/${id}/erase`, { key: other.key, baseUrl });
    expect(foreign.status).toBe(404);
    expect((await call("get", `/open/v1/contacts/${id}`)).status).toBe(200);
  });
});
