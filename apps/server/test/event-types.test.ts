import { beforeAll, describe, expect, it } from "vitest";
import { EVENT_TYPES, isOperational } from "../src/events/model.js";
import { api, newWorkspace } from "./helpers/api.js";
import { compileCatalogSchema } from "./helpers/catalog.js";
import { allEvents } from "./helpers/events.js";

// The event-type catalog: every type of the spec, its description and the schema of its body,
// checked against the events the server really records.

let key: string;
beforeAll(async () => {
  ({ key } = await newWorkspace());
});

type Entry = { type: string; description: string; operational: boolean; schema: Record<string, unknown> };

async function catalog(): Promise<Entry[]> {
  const response = await api.get("/open/v1/event-types", { key });
  expect(response.status).toBe(200);
  expect(response.body).toMatchObject({ object: "list", has_more: false });
  return response.body.data;
}

describe("GET /open/v1/event-types", () => {
  it("lists every event type once, in the spec's order, with a description and a self-contained schema", async () => {
    const entries = await catalog();
    expect(entries.map((e) => e.type)).toEqual([...EVENT_TYPES]);
    for (const entry of entries) {
      expect(entry.description.length).toBeGreaterThan(0);
      expect(entry.schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
      // Self-contained: no `$ref` left to resolve.
      expect(JSON.stringify(entry.schema)).not.toContain('"$ref"');
      // The spec's `x-operational` and the server's rule agree.
      expect(entry.operational).toBe(isOperational(entry.type));
    }
  });

  it("gives schemas that accept the events the server records, and refuse another type's", async () => {
    const contact = await api.post("/open/v1/contacts", { key, body: { name: "Catalog" } });
    await api.patch(`/open/v1/contacts/${contact.body.id}`, { key, body: { name: "Catalog 2" } });
    const ticket = await api.post("/open/v1/tickets", { key, body: { subject: "Catalog" } });
    await api.patch(`/open/v1/tickets/${ticket.body.id}`, { key, body: { status: "Solved" } });
    const schemas = new Map((await catalog()).map((e) => [e.type, compileCatalogSchema(e.schema)]));
    const events = await allEvents(key);
    expect(new Set(events.map((e) => e.type))).toEqual(
      new Set(["contact.created", "contact.updated", "ticket.created", "ticket.updated"]),
    );
    for (const event of events) {
      const validate = schemas.get(event.type);
      expect(validate?.(event), JSON.stringify(validate?.errors)).toBe(true);
      expect(schemas.get("message.received")?.(event)).toBe(false);
    }
  });

  it("needs the webhooks:manage scope", async () => {
    const { key: narrow } = await newWorkspace(["contacts:read"]);
    const response = await api.get("/open/v1/event-types", { key: narrow });
    expect(response.status).toBe(403);
    expect(response.body.error.code).toBe("insufficient_scope");
  });
});
