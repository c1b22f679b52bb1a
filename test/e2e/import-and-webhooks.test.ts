// The pieces together, as users run them: the built `deskline` imports a CSV into the built
// server, its webhook deliveries reach an HTTPS receiver built with the verifier's middleware, and
// what the receiver verified is exactly what the SDK reads back; `deskline tickets solve` the same
// way. Every API answer on the way is checked against the spec by the proxy the world sets up.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { eventually } from "@deskline/test-kit";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { byEventId, startVerifiedReceiver, type VerifiedReceiver } from "../helpers/verified-receiver.js";
import { newWorld, type World } from "../helpers/world.js";

let world: World;
let receiver: VerifiedReceiver;

beforeAll(async () => {
  world = await newWorld();
  receiver = await startVerifiedReceiver({ certFile: inject("certFile"), keyFile: inject("keyFile") });
  const endpoint = await world.sdk.webhookEndpoints.create({
    url: receiver.url,
    description: "e2e receiver",
    events: ["contact.created", "contact.updated", "ticket.updated"],
  });
  expect(endpoint.secret).toMatch(/^whsec_/);
  receiver.useSecret(endpoint.secret as string);
});

afterAll(async () => {
  await receiver?.close();
  await world?.close();
});

afterAll(() => {
  // Whatever the tests did, no answer broke the spec.
  expect(world.proxy.problems()).toEqual([]);
});

const NEW_ROWS = 28;

/** The CSV a CRM would export: new contacts, one that exists already (changed), one bad row. */
function crmExport(): { csv: string; badLine: number } {
  const lines = ["name,email,tags,lifecycle_stage,external_ids.crm"];
  for (let i = 1; i <= NEW_ROWS; i++) {
    lines.push(`Customer ${i},customer${i}@example.com,imported;batch-${i % 3},lead,crm-${i}`);
    if (i === 14) lines.push("Grace Hopper,grace@example.com,imported,customer,crm-grace");
    if (i === 20) lines.push("Broken Row,not-an-email,imported,lead,crm-broken");
  }
  const badLine = lines.findIndex((line) => line.startsWith("Broken Row")) + 1;
  return { csv: `${lines.join("\n")}\n`, badLine };
}

/**
 * `deskline contacts import` of the CRM's export over a contact that exists already: its summary,
 * its rejected rows, and what the server holds after it, read through the SDK.
 */
async function importCrmExport() {
  const existing = await world.sdk.contacts.create({
    name: "Grace Hopper",
    email: "grace@example.com",
    lifecycle_stage: "lead",
  });
  const { csv, badLine } = crmExport();
  const file = join(world.scratch, "crm-export.csv");
  const errorsFile = join(world.scratch, "rejected.csv");
  writeFileSync(file, csv);

  const run = await world.cli(["contacts", "import", file, "--errors", errorsFile, "--json"]);
  expect(run.stderr).toBe("");
  expect(run.code).toBe(1); // a bad row makes it a partial failure
  expect(JSON.parse(run.stdout)).toMatchObject({
    rows: NEW_ROWS + 2,
    created: NEW_ROWS,
    updated: 1,
    unchanged: 0,
    failed: 1,
  });
  const rejected = readFileSync(errorsFile, "utf8").trim().split("\n");
  expect(rejected[0]).toBe("line,reason,name,email,tags,lifecycle_stage,external_ids.crm");
  expect(rejected).toHaveLength(2);
  expect(rejected[1]).toMatch(
    new RegExp(`^${badLine},.*email.*,Broken Row,not-an-email,imported,lead,crm-broken$`),
  );

  // What the server holds, read through the SDK.
  const contacts = await world.sdk.contacts.list({ limit: 100 }).toArray();
  expect(contacts).toHaveLength(NEW_ROWS + 1);
  expect(contacts.find((c) => c.email === "not-an-email")).toBeUndefined();
  const grace = await world.sdk.contacts.get(existing.id);
  expect(grace).toMatchObject({
    lifecycle_stage: "customer",
    tags: ["imported"],
    external_ids: { crm: "crm-grace" },
  });
  return { existing, contacts, grace };
}

/**
 * Every expected event arrived, verified: one contact.created per contact (the import's and
 * Grace's own), one contact.updated for Grace's row.
 */
async function contactEventsArrived() {
  const arrived = await eventually(
    async () => byEventId(receiver.verified),
    (events) =>
      [...events.values()].filter((e) => e.event.type.startsWith("contact.")).length >= NEW_ROWS + 2,
    "the import's webhook deliveries",
    45_000,
  );
  const contactEvents = [...arrived.values()]
    .map((e) => e.event)
    .filter((e) => e.type.startsWith("contact."));
  expect(receiver.refused).toBe(0);
  return { arrived, contactEvents };
}

describe("deskline contacts import → server → signed webhooks → verified receiver", () => {
  it("delivers exactly each imported row's event, verified, equal to what the SDK reads back", async () => {
    const { existing, contacts, grace } = await importCrmExport();
    const { arrived, contactEvents } = await contactEventsArrived();

    const created = contactEvents.filter((e) => e.type === "contact.created");
    const updated = contactEvents.filter((e) => e.type === "contact.updated");
    expect(created).toHaveLength(NEW_ROWS + 1);
    expect(updated).toHaveLength(1);
    const byContact = new Map(contacts.map((c) => [c.id, c]));
    expect(new Set(created.map((e) => (e.data as { id: string }).id))).toEqual(new Set(byContact.keys()));

    // The payloads are the records the SDK reads: a created-only contact as it is now, Grace as
    // her update left her, with the old value of what changed.
    for (const event of created) {
      const id = (event.data as { id: string }).id;
      if (id === existing.id) expect(event.data).toEqual(existing);
      else expect(event.data).toEqual(byContact.get(id));
    }
    const [graceUpdate] = updated;
    expect(graceUpdate?.data).toEqual(grace);
    expect(graceUpdate).toMatchObject({ previous_attributes: { lifecycle_stage: "lead" } });

    // The events API holds exactly these events, byte for byte the same JSON as delivered.
    const listed = await world.sdk.events
      .list({ type: ["contact.created", "contact.updated"], limit: 100 })
      .toArray();
    expect(new Map(listed.map((e) => [e.id, e]))).toEqual(new Map(contactEvents.map((e) => [e.id, e])));
    const one = await world.sdk.events.get(graceUpdate?.id as string);
    expect(one).toEqual(graceUpdate);

    // Delivery is at least once, but with one healthy server and a receiver that answers at once
    // nothing calls for a second send: each event arrived exactly once. (A relay that runs its
    // hooks again, e.g. the sweep overtaking the import's writer, must not send again.)
    const duplicates = [...arrived.values()].filter((e) => e.count > 1).map((e) => e.event.id);
    expect(duplicates).toEqual([]);
  });
});

describe("deskline tickets solve → ticket.updated with previous_attributes", () => {
  it("solves the ticket, reports it in --json, and the receiver gets the change", async () => {
    const ticket = await world.sdk.tickets.create({ subject: "Printer on fire", status: "On you" });
    const run = await world.cli(["tickets", "solve", ticket.id, "--json"]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report).toEqual({
      status: "Solved",
      changed: 1,
      unchanged: 0,
      refused: 0,
      failed: 0,
      results: [expect.objectContaining({ id: ticket.id, outcome: "changed", from: "On you" })],
    });

    const solved = await world.sdk.tickets.get(ticket.id);
    expect(solved.status).toBe("Solved");
    expect(solved.solved_at).toEqual(expect.any(String));
    const arrived = await eventually(
      async () => [...byEventId(receiver.verified).values()].map((e) => e.event),
      (events) =>
        events.some((e) => e.type === "ticket.updated" && (e.data as { id: string }).id === ticket.id),
      "the ticket.updated delivery",
      45_000,
    );
    const updates = arrived.filter(
      (e) => e.type === "ticket.updated" && (e.data as { id: string }).id === ticket.id,
    );
    expect(updates).toHaveLength(1);
    expect(updates[0]).toMatchObject({ previous_attributes: { status: "On you" } });
    expect(updates[0]?.data).toEqual(solved);
  });

  it("a second solve changes nothing and sends nothing; a missing ticket fails with exit 1", async () => {
    const ticket = await world.sdk.tickets.create({ subject: "Already done", status: "Solved" });
    const again = await world.cli(["tickets", "solve", ticket.id, "--json"]);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({
      changed: 0,
      unchanged: 1,
      results: [{ outcome: "unchanged" }],
    });

    const missingId = "tkt_0VbeYBCu9tPuFypVLWBsJN";
    const missing = await world.cli(["tickets", "solve", missingId, "--json"]);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout)).toMatchObject({
      failed: 1,
      results: [{ id: missingId, outcome: "failed", code: "resource_missing" }],
    });
    const get = await world.cli(["tickets", "get", missingId, "--json"]);
    expect(get.code).toBe(1);
    expect(get.stdout).toBe("");
    expect(JSON.parse(get.stderr)).toEqual({
      error: {
        status: 404,
        code: "resource_missing",
        message: expect.any(String),
        param: expect.anything(),
        request_id: expect.stringMatching(/^req_/),
      },
    });
    const usage = await world.cli(["tickets", "solve", "--json"]);
    expect(usage.code).toBe(2);

    // Nothing of this reached the receiver: no event for an unchanged ticket.
    const forTicket = receiver.verified.filter((d) => (d.event.data as { id: string }).id === ticket.id);
    expect(forTicket).toEqual([]);
  });
});
