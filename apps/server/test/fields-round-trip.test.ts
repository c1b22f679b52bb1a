import { describe, expect, inject, it } from "vitest";
import { type ApiResponse, admin, api, newWorkspace } from "./helpers/api.js";
import { specOperations } from "./helpers/contract.js";
import { openConversation } from "./helpers/conversations.js";

/**
 * Every field a request body schema accepts must reach the resource the server answers: a field
 * added to the spec is either stored and shown, or this test fails. Without it, Ajv would accept
 * the new field (the schema lists it) and the server could silently drop it.
 *
 * Values come from the schemas themselves (below), so a new field needs no change here unless it
 * has a shape the sampler cannot make; then the sampler says so and the test fails.
 */

type Json = Record<string, any>;

interface World {
  workspaceId: string;
  key: string;
}

/** Fields that name another record need one that exists in the workspace. */
const REFERENCES: Record<string, (world: World) => Promise<string>> = {
  contact_id: async ({ key }) =>
    (await api.post("/open/v1/contacts", { key, body: { name: "Ref" } })).body.id,
  conversation_id: async ({ workspaceId, key }) => (await openConversation(workspaceId, key)).id,
};

const FORMATS: Record<string, string> = {
  email: "round.trip@example.com",
  uri: "https://example.com/round-trip",
  date: "2001-02-03",
  // Canonical (UTC, milliseconds), as the server answers times.
  "date-time": "2026-01-02T03:04:05.000Z",
};

const typesOf = (schema: Json): string[] => (Array.isArray(schema.type) ? schema.type : [schema.type]);

/** A valid value of `schema` that differs from its default (so a dropped field cannot pass). */
function sample(schema: Json, name: string): unknown {
  if (schema.const !== undefined) return schema.const;
  const variants = (schema.oneOf ?? schema.anyOf) as Json[] | undefined;
  if (variants) {
    const value = variants.find((variant) => variant.type !== "null");
    if (value) return sample(value, name);
  }
  if (schema.enum) {
    const values = schema.enum.filter((value: unknown) => value !== null && value !== schema.default);
    return values.at(-1);
  }
  const types = typesOf(schema).filter((type) => type !== "null");
  if (types.includes("boolean")) return true;
  if (types.includes("integer") || types.includes("number")) return 7;
  if (types.includes("array")) return [sample(schema.items ?? {}, `${name}[0]`)];
  if (types.includes("object")) {
    // An open object (a content filter) is sampled by its own example.
    if (schema.additionalProperties === true && schema.examples?.[0]) return schema.examples[0];
    const [first] = Object.entries((schema.properties ?? {}) as Json);
    if (first) return { [first[0]]: sample(first[1], `${name}.${first[0]}`) };
    if (schema.additionalProperties) return { round_trip: sample(schema.additionalProperties, `${name}.*`) };
  }
  if (types.includes("string")) {
    if (schema.format) {
      const value = FORMATS[schema.format];
      if (value === undefined)
        throw new Error(`no sample for ${name} (format ${schema.format}): add one here`);
      return value;
    }
    // A pattern's own example, or the plain sample where the pattern takes it (text not blank).
    const candidate = schema.examples?.[0] ?? "round-trip";
    if (schema.pattern && !new RegExp(schema.pattern, "u").test(candidate))
      throw new Error(`no sample for ${name} (pattern ${schema.pattern}): add one here`);
    return candidate;
  }
  throw new Error(`no sample for ${name} (${JSON.stringify(schema).slice(0, 200)}): add one here`);
}

/** A body that sets every field the operation's request schema lists. */
async function fullBody(operationId: string, world: World): Promise<Json> {
  const operation = specOperations.find((op) => op.operationId === operationId);
  const properties = (operation?.bodySchema?.properties ?? {}) as Json;
  const body: Json = {};
  for (const [name, schema] of Object.entries(properties)) {
    body[name] = REFERENCES[name] ? await REFERENCES[name](world) : sample(schema, name);
  }
  return body;
}

/** How each served operation with a body is called; an update starts from a minimal record. */
const SENDERS: Record<string, (body: Json, world: World) => Promise<ApiResponse>> = {
  createContact: (body, { key }) => api.post("/open/v1/contacts", { key, body }),
  updateContact: async (body, { key }) => {
    const { id } = (await api.post("/open/v1/contacts", { key, body: { name: "Before" } })).body;
    return api.patch(`/open/v1/contacts/${id}`, { key, body });
  },
  createCustomFieldDefinition: (body, { key }) =>
    api.post("/open/v1/custom-field-definitions", { key, body }),
  // Of the sampled type (the type cannot change), so that every sampled field applies.
  updateCustomFieldDefinition: async (body, { key }) => {
    const before = { key: "before", label: "Before", type: body.type, options: body.options };
    await api.post("/open/v1/custom-field-definitions", { key, body: before });
    return api.patch("/open/v1/custom-field-definitions/before", { key, body });
  },
  createTicket: (body, { key }) => api.post("/open/v1/tickets", { key, body }),
  updateTicket: async (body, { key }) => {
    const { id } = (await api.post("/open/v1/tickets", { key, body: { subject: "Before" } })).body;
    return api.patch(`/open/v1/tickets/${id}`, { key, body });
  },
  createWebhookEndpoint: (body, { key }) => api.post("/open/v1/webhook-endpoints", { key, body }),
  updateWebhookEndpoint: async (body, { key }) => {
    const before = { url: "https://before.example.invalid/hook" };
    const { id } = (await api.post("/open/v1/webhook-endpoints", { key, body: before })).body;
    return api.patch(`/open/v1/webhook-endpoints/${id}`, { key, body });
  },
  rotateWebhookEndpointSecret: async (body, { key }) => {
    const before = { url: "https://before.example.invalid/hook" };
    const { id } = (await api.post("/open/v1/webhook-endpoints", { key, body: before })).body;
    return api.post(`/open/v1/webhook-endpoints/${id}/rotate-secret`, { key, body });
  },
  sendMessage: async (body, { workspaceId, key }) => {
    const { id } = await openConversation(workspaceId, key);
    return api.post(`/open/v1/conversations/${id}/messages`, { key, body });
  },
  createWorkspace: (body) => admin("POST", "/admin/v1/workspaces", body),
  updateWorkspace: (body, { workspaceId }) => admin("PATCH", `/admin/v1/workspaces/${workspaceId}`, body),
  createApiKey: (body, { workspaceId }) =>
    admin("POST", `/admin/v1/workspaces/${workspaceId}/api-keys`, body),
  // The first customer message is not part of the conversation resource: it is the
  // conversation's first message, so `message` is looked for there.
  createConversation: async (body, { workspaceId, key }) => {
    const response = await admin("POST", `/admin/v1/workspaces/${workspaceId}/conversations`, body);
    const messages = await api.get(`/open/v1/conversations/${response.body.id}/messages`, { key });
    const [first] = messages.body.data;
    return { ...response, body: { ...response.body, message: { body: first?.body } } };
  },
  addCustomerMessage: async (body, { workspaceId, key }) => {
    const { id } = await openConversation(workspaceId, key);
    return admin("POST", `/admin/v1/conversations/${id}/messages`, body);
  },
  setConversationAssignees: async (body, { workspaceId, key }) => {
    const { id } = await openConversation(workspaceId, key);
    return admin("PUT", `/admin/v1/conversations/${id}/assignees`, body);
  },
  // Looks a key up: the sample body names no key, so the world's own is looked up.
  introspectApiKey: (_body, { key }) => admin("POST", "/admin/v1/api-keys/introspect", { key }),
};

/**
 * Fields that tune the operation rather than set a field of the resource, so the answer cannot
 * show them; each is checked by the operation's own tests instead.
 */
const NOT_RESOURCE_FIELDS: Record<string, string[]> = {
  // The old secret's grace period (webhook-endpoints.test.ts reads it from the database).
  rotateWebhookEndpointSecret: ["expires_in"],
  // The plaintext key is what is looked up, never echoed (auth.test.ts checks the lookup).
  introspectApiKey: ["key"],
  // Header values are write-only: the endpoint shows their names (webhook-endpoints.test.ts
  // checks the values arrive with deliveries).
  createWebhookEndpoint: ["headers"],
  updateWebhookEndpoint: ["headers"],
};

/**
 * Operations whose body steers the operation instead of holding a resource's fields: a batch
 * (its items are contacts: checked below), a merge (ids; contacts-merge.test.ts), a resend
 * or recovery (which endpoint, which window; webhook-recovery.test.ts), a test event or a bulk
 * resend (which type, which deliveries), a console session's lifetime, and a search.
 */
const STEERING_BODIES = new Set([
  "batchUpsertContacts",
  "mergeContacts",
  "resendEvent",
  "recoverWebhookEndpoint",
  // How long the console session lasts (console-sessions.test.ts).
  "createConsoleSession",
  "createConsoleLink",
  // Which example to send, which deliveries to resend (webhook-console-api.test.ts).
  "sendWebhookEndpointTestEvent",
  "resendWebhookDeliveries",
  // What to find, in what order (search-api.test.ts).
  "searchContacts",
  "searchTickets",
]);

const withBody = specOperations.filter(
  (operation) => operation.bodySchema?.properties && !STEERING_BODIES.has(operation.operationId),
);

describe("every field of a request body reaches the resource", () => {
  it.each(Object.keys(SENDERS))("%s", async (operationId) => {
    const world = await newWorkspace();
    const body = await fullBody(operationId, world);
    expect(Object.keys(body).length).toBeGreaterThan(0);
    const response = await (SENDERS[operationId] as (typeof SENDERS)[string])(body, world);
    expect(response.status, JSON.stringify(response.body)).toBeLessThan(300);
    for (const [field, value] of Object.entries(body)) {
      if (NOT_RESOURCE_FIELDS[operationId]?.includes(field)) continue;
      expect(response.body[field], `${operationId}: ${field}`).toEqual(value);
    }
  });

  it("batchUpsertContacts: every field of an item reaches the contact, created or updated", async () => {
    const world = await newWorkspace();
    const item = await fullBody("createContact", world);
    const created = await api.post("/open/v1/contacts/batch", {
      key: world.key,
      body: { match: "email", contacts: [item] },
    });
    const [result] = created.body.data;
    expect(result.status, JSON.stringify(result)).toBe("created");
    for (const [field, value] of Object.entries(item)) expect(result.contact[field], field).toEqual(value);

    // Another workspace: the same sampled external id would be taken by the contact above.
    const other = await newWorkspace();
    const before = await api.post("/open/v1/contacts", {
      key: other.key,
      body: { name: "Before", email: "b@example.com" },
    });
    const update = { ...(await fullBody("updateContact", other)), email: "b@example.com" };
    const updated = await api.post("/open/v1/contacts/batch", {
      key: other.key,
      body: { match: "email", contacts: [update] },
    });
    const [changed] = updated.body.data;
    expect(changed).toMatchObject({ status: "updated", contact: { id: before.body.id } });
    for (const [field, value] of Object.entries(update)) expect(changed.contact[field], field).toEqual(value);
  });

  it.each(withBody.filter((operation) => !SENDERS[operation.operationId]).map((op) => [op.operationId, op]))(
    "%s is not served yet (once it is, add it to SENDERS above)",
    async (_id, operation) => {
      const path = operation.path.replace(/\{\w+\}/g, "x_0000000000000000000000");
      const response = await fetch(new URL(path, inject("baseUrl")), { method: operation.method });
      expect(((await response.json()) as Json).error?.code).toBe("route_not_found");
    },
  );
});
