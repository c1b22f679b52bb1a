import { beforeAll, describe, expect, it } from "vitest";
import { newId } from "../src/platform/ids.js";
import { ALL_SCOPES, admin, api, newKey, newWorkspace } from "./helpers/api.js";
import { newContact, openConversation } from "./helpers/conversations.js";
import { expectInsufficientScope, expectSameAsMissing } from "./helpers/expect.js";
import { walkPages } from "./helpers/paging.js";

type Conversation = Record<string, any> & { id: string };

let key: string;
let workspaceId: string;

beforeAll(async () => {
  ({ key, workspaceId } = await newWorkspace());
});

const messagesPath = (id: string) => `/open/v1/conversations/${id}/messages`;
const getConversation = async (id: string, withKey = key): Promise<Conversation> => {
  const response = await api.get(`/open/v1/conversations/${id}`, { key: withKey });
  expect(response.status).toBe(200);
  return response.body;
};
const send = (
  id: string,
  body: unknown,
  options: { withKey?: string; headers?: Record<string, string> } = {},
) => api.post(messagesPath(id), { key: options.withKey ?? key, body, headers: options.headers });
const messagesOf = async (id: string, withKey = key) => {
  const response = await api.get(messagesPath(id), { key: withKey, query: { limit: 100 } });
  expect(response.status).toBe(200);
  return response.body.data as Record<string, any>[];
};
const customerWrites = async (id: string, body = "Any news?") => {
  const response = await admin("POST", `/admin/v1/conversations/${id}/messages`, { body });
  expect(response.status).toBe(201);
  return response.body;
};

describe("get a conversation", () => {
  it("returns the conversation a channel opened, and its first customer message", async () => {
    const contactId = await newContact(key);
    const opened = await openConversation(workspaceId, key, {
      contactId,
      channel: "whatsapp",
      subject: "Order 1234 never arrived",
      body: "Where is my order?",
    });
    expect(await getConversation(opened.id)).toEqual(opened);
    expect(opened).toEqual({
      id: expect.stringMatching(/^conv_[0-9A-Za-z]{22}$/),
      object: "conversation",
      status: "open",
      channel: "whatsapp",
      contact_id: contactId,
      subject: "Order 1234 never arrived",
      unread: true,
      assignee_ids: [],
      last_message_at: opened.created_at,
      closed_at: null,
      created_at: expect.any(String),
      updated_at: opened.created_at,
    });
    expect(await messagesOf(opened.id)).toEqual([
      {
        id: expect.stringMatching(/^msg_[0-9A-Za-z]{22}$/),
        object: "message",
        conversation_id: opened.id,
        body: "Where is my order?",
        internal_note: false,
        direction: "inbound",
        author_type: "customer",
        created_at: opened.created_at,
        updated_at: opened.created_at,
      },
    ]);
  });

  it("an unknown conversation is 404 resource_missing for every operation", async () => {
    const missing = newId("conv");
    for (const response of [
      await api.get(`/open/v1/conversations/${missing}`, { key }),
      await api.get(messagesPath(missing), { key }),
      await send(missing, { body: "Hello?", internal_note: false }),
      await api.get("/open/v1/conversations/not-an-id", { key }),
    ]) {
      expect(response.status).toBe(404);
      expect(response.body.error).toMatchObject({ code: "resource_missing", param: "id" });
    }
  });
});

describe("list messages, and the query parameters reads refuse", () => {
  it("lists messages newest first, notes included, and pages through them", async () => {
    const { id } = await openConversation(workspaceId, key, { body: "message 0" });
    const expected = [(await messagesOf(id))[0]?.id as string];
    for (let i = 1; i < 13; i++) {
      const response =
        i % 4 === 0
          ? { body: await customerWrites(id, `message ${i}`) }
          : await send(id, { body: `message ${i}`, internal_note: i % 3 === 0 });
      expected.unshift(response.body.id);
    }
    const all = await messagesOf(id);
    expect(all.map((message) => message.id)).toEqual(expected);
    expect(all.map((message) => message.body)).toEqual(expected.map((_, i) => `message ${12 - i}`));
    expect(all.filter((message) => message.internal_note).map((m) => m.body)).toEqual([
      "message 9",
      "message 6",
      "message 3",
    ]);
    expect(await walkPages(messagesPath(id), key, { limit: 5 })).toEqual(expected);

    const page = await api.get(messagesPath(id), { key, query: { starting_after: expected[9] as string } });
    expect(page.body).toEqual({ object: "list", data: all.slice(10), has_more: false });
  });

  it("lists only that conversation's messages", async () => {
    const a = await openConversation(workspaceId, key, { body: "in A" });
    const b = await openConversation(workspaceId, key, { body: "in B" });
    await send(b.id, { body: "reply in B", internal_note: false });
    expect((await messagesOf(a.id)).map((m) => m.body)).toEqual(["in A"]);
    expect((await messagesOf(b.id)).map((m) => m.body)).toEqual(["reply in B", "in B"]);
  });

  it.each<[string, Record<string, string | number>, string, string]>([
    [
      "a cursor of another kind",
      { starting_after: "conv_2bXkr3LpV8cX1zQa" },
      "parameter_invalid",
      "starting_after",
    ],
    ["limit 0", { limit: 0 }, "parameter_invalid", "limit"],
    ["a filter it does not take", { unread: "true" }, "parameter_unknown", "unread"],
  ])("listMessages rejects %s", async (_name, query, code, param) => {
    const { id } = await openConversation(workspaceId, key);
    const response = await api.get(messagesPath(id), { key, query });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code, param });
  });

  it("getConversation takes no query parameters", async () => {
    const { id } = await openConversation(workspaceId, key);
    const response = await api.get(`/open/v1/conversations/${id}`, { key, query: { expand: "messages" } });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: "parameter_unknown", param: "expand" });
  });
});

describe("send a message: unread and last_message_at", () => {
  it("a reply is an outbound API message; it marks the conversation read and moves last_message_at", async () => {
    const opened = await openConversation(workspaceId, key);
    const response = await send(opened.id, { body: "We are on it.", internal_note: false });
    expect(response.status).toBe(201);
    const message = response.body;
    expect(message).toEqual({
      id: expect.stringMatching(/^msg_/),
      object: "message",
      conversation_id: opened.id,
      body: "We are on it.",
      internal_note: false,
      direction: "outbound",
      author_type: "api",
      created_at: expect.any(String),
      updated_at: message.created_at,
    });
    expect((await messagesOf(opened.id))[0]).toEqual(message);
    expect(await getConversation(opened.id)).toEqual({
      ...opened,
      unread: false,
      last_message_at: message.created_at,
      updated_at: message.created_at,
    });
  });

  it("an internal note leaves unread as it is, and still moves last_message_at", async () => {
    const opened = await openConversation(workspaceId, key);
    const note = await send(opened.id, { body: "Finance is checking.", internal_note: true });
    expect(note.status).toBe(201);
    expect(note.body).toMatchObject({ internal_note: true, direction: "outbound", author_type: "api" });
    const afterNote = await getConversation(opened.id);
    expect(afterNote).toMatchObject({ unread: true, last_message_at: note.body.created_at });

    await send(opened.id, { body: "Fixed.", internal_note: false });
    const read = await getConversation(opened.id);
    expect(read.unread).toBe(false);
    const secondNote = await send(opened.id, { body: "Closed the loop.", internal_note: true });
    expect(await getConversation(opened.id)).toMatchObject({
      unread: false,
      last_message_at: secondNote.body.created_at,
    });
  });

  it("a customer message after the reply makes the conversation unread again; the next reply reads it", async () => {
    const { id } = await openConversation(workspaceId, key);
    await send(id, { body: "Done?", internal_note: false });
    const customer = await customerWrites(id);
    expect(await getConversation(id)).toMatchObject({ unread: true, last_message_at: customer.created_at });
    await send(id, { body: "Yes, done.", internal_note: false });
    expect((await getConversation(id)).unread).toBe(false);
  });

  it("concurrent customer messages, replies and notes: unread and last_message_at follow the newest", async () => {
    for (let round = 0; round < 5; round++) {
      const { id } = await openConversation(workspaceId, key);
      const writes = Array.from({ length: 24 }, (_, i) =>
        i % 3 === 0
          ? admin("POST", `/admin/v1/conversations/${id}/messages`, { body: `customer ${i}` })
          : send(id, { body: `agent ${i}`, internal_note: i % 3 === 2 }),
      );
      for (const response of await Promise.all(writes)) expect(response.status).toBe(201);
      const messages = await messagesOf(id);
      expect(messages).toHaveLength(25);
      const newestVisible = messages.find((message) => !message.internal_note);
      const conversation = await getConversation(id);
      expect(conversation.unread).toBe(newestVisible?.direction === "inbound");
      expect(conversation.last_message_at).toBe(messages[0]?.created_at);
      expect(conversation.updated_at).toBe(messages[0]?.created_at);
    }
  });
});

describe("send a message: closed conversations and refused bodies", () => {
  it("a closed conversation takes messages and stays closed", async () => {
    const { id } = await openConversation(workspaceId, key);
    const closed = (await admin("POST", `/admin/v1/conversations/${id}/close`)).body;
    const reply = await send(id, { body: "One more thing.", internal_note: false });
    expect(reply.status).toBe(201);
    expect(await getConversation(id)).toMatchObject({
      status: "closed",
      closed_at: closed.closed_at,
      unread: false,
      last_message_at: reply.body.created_at,
    });
  });

  it.each<[string, unknown, string, string]>([
    ["a missing body", { internal_note: false }, "parameter_missing", "body"],
    ["a missing internal_note", { body: "Hi" }, "parameter_missing", "internal_note"],
    ["an empty body", { body: "", internal_note: false }, "parameter_invalid", "body"],
    ["a body of spaces", { body: "   ", internal_note: false }, "parameter_invalid", "body"],
    ["a body that is no string", { body: 42, internal_note: false }, "parameter_invalid", "body"],
    ["a null body", { body: null, internal_note: false }, "parameter_invalid", "body"],
    [
      "internal_note as a string",
      { body: "Hi", internal_note: "true" },
      "parameter_invalid",
      "internal_note",
    ],
    ["internal_note as a number", { body: "Hi", internal_note: 1 }, "parameter_invalid", "internal_note"],
    [
      "a body over 20000 characters",
      { body: "x".repeat(20_001), internal_note: false },
      "parameter_invalid",
      "body",
    ],
    [
      "an unknown field",
      { body: "Hi", internal_note: false, direction: "inbound" },
      "parameter_unknown",
      "direction",
    ],
    [
      "author_type (set by the server)",
      { body: "Hi", internal_note: false, author_type: "customer" },
      "parameter_unknown",
      "author_type",
    ],
  ])("rejects %s and stores nothing", async (_name, body, code, param) => {
    const opened = await openConversation(workspaceId, key);
    const response = await send(opened.id, body);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ type: "invalid_request_error", code, param });
    expect(await messagesOf(opened.id)).toHaveLength(1);
    expect(await getConversation(opened.id)).toEqual(opened);
  });

  it("rejects a body that is no JSON object, and one that is not sent as JSON", async () => {
    const { id } = await openConversation(workspaceId, key);
    const sendRaw = (rawBody: string, contentType: string) =>
      api.post(messagesPath(id), { key, rawBody, headers: { "Content-Type": contentType } });
    const broken = await sendRaw('{"body": "Hi", ', "application/json");
    expect(broken.status).toBe(400);
    expect(broken.body.error.code).toBe("invalid_json");
    const array = await send(id, [{ body: "Hi", internal_note: false }]);
    expect(array.status).toBe(400);
    expect(array.body.error.code).toBe("parameter_invalid");
    const text = await sendRaw("body=Hi", "application/x-www-form-urlencoded");
    expect(text.status).toBe(415);
    expect(text.body.error.code).toBe("unsupported_media_type");
    expect(await messagesOf(id)).toHaveLength(1);
  });
});

describe("idempotent send", () => {
  it("a replay answers the first message with Idempotent-Replayed and stores one message", async () => {
    const { id } = await openConversation(workspaceId, key);
    const headers = { "Idempotency-Key": `send-${id}` };
    const body = { body: "Exactly once.", internal_note: false };
    const first = await send(id, body, { headers });
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const replay = await send(id, body, { headers: { "Idempotency-Key": `"send-${id}"` } });
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toEqual(first.body);
    const messages = await messagesOf(id);
    expect(messages.filter((message) => message.body === "Exactly once.")).toEqual([first.body]);
  });

  it("the same key with another body is 422 idempotency_key_reused, and stores nothing", async () => {
    const { id } = await openConversation(workspaceId, key);
    const headers = { "Idempotency-Key": `reuse-${id}` };
    expect((await send(id, { body: "First", internal_note: false }, { headers })).status).toBe(201);
    const reused = await send(id, { body: "First", internal_note: true }, { headers });
    expect(reused.status).toBe(422);
    expect(reused.body.error.code).toBe("idempotency_key_reused");
    expect((await messagesOf(id)).map((m) => m.body)).toEqual(["First", "Hello, I need help."]);
  });

  it("the same key on another conversation is another request: 422", async () => {
    const a = await openConversation(workspaceId, key);
    const b = await openConversation(workspaceId, key);
    const headers = { "Idempotency-Key": `cross-${a.id}` };
    const body = { body: "Same words", internal_note: false };
    expect((await send(a.id, body, { headers })).status).toBe(201);
    expect((await send(b.id, body, { headers })).status).toBe(422);
    expect(await messagesOf(b.id)).toHaveLength(1);
  });
});

describe("scopes", () => {
  let id: string;
  beforeAll(async () => {
    ({ id } = await openConversation(workspaceId, key));
  });

  const operations = () =>
    [
      {
        scope: "conversations:read",
        ok: 200,
        call: (k?: string) => api.get("/open/v1/conversations", { key: k }),
      },
      {
        scope: "conversations:read",
        ok: 200,
        call: (k?: string) => api.get(`/open/v1/conversations/${id}`, { key: k }),
      },
      { scope: "conversations:read", ok: 200, call: (k?: string) => api.get(messagesPath(id), { key: k }) },
      {
        scope: "messages:write",
        ok: 201,
        call: (k?: string) =>
          api.post(messagesPath(id), { key: k, body: { body: "Scoped", internal_note: true } }),
      },
    ] as const;

  it("each operation with a key lacking its scope is 403 insufficient_scope naming it", async () => {
    for (const { scope, call } of operations()) {
      const lacking = await newKey(
        workspaceId,
        ALL_SCOPES.filter((s) => s !== scope),
      );
      expectInsufficientScope(await call(lacking), scope);
    }
  });

  it("each operation works with its scope alone", async () => {
    for (const { scope, ok, call } of operations()) {
      expect((await call(await newKey(workspaceId, [scope]))).status, scope).toBe(ok);
    }
  });

  it("no key is 401 missing_api_key, a wrong one 401 invalid_api_key", async () => {
    for (const { call } of operations()) {
      expect((await call()).body.error.code).toBe("missing_api_key");
      expect((await call("dk_not_a_real_key")).body.error.code).toBe("invalid_api_key");
    }
  });

  it("a forbidden send stores nothing", async () => {
    const before = await messagesOf(id);
    const readOnly = await newKey(workspaceId, ["conversations:read"]);
    expect((await send(id, { body: "Sneaky", internal_note: false }, { withKey: readOnly })).status).toBe(
      403,
    );
    expect(await messagesOf(id)).toEqual(before);
  });
});

describe("workspace isolation", () => {
  let theirKey: string;
  let theirs: Conversation;
  beforeAll(async () => {
    let theirWorkspace: string;
    ({ key: theirKey, workspaceId: theirWorkspace } = await newWorkspace());
    theirs = await openConversation(theirWorkspace, theirKey, { channel: "isolated-channel" });
  });

  it("another workspace's conversation is 404 for every operation, exactly like a missing one", async () => {
    const missing = newId("conv");
    const calls = [
      (id: string) => api.get(`/open/v1/conversations/${id}`, { key }),
      (id: string) => api.get(messagesPath(id), { key }),
      (id: string) => send(id, { body: "Hijacked", internal_note: false }),
    ];
    for (const call of calls) {
      expectSameAsMissing(
        { response: await call(theirs.id), id: theirs.id },
        { response: await call(missing), id: missing },
      );
    }
    expect(await getConversation(theirs.id, theirKey)).toEqual(theirs);
    expect(await messagesOf(theirs.id, theirKey)).toHaveLength(1);
  });

  it("lists and filters see only the key's workspace", async () => {
    for (const query of <Record<string, string | boolean>[]>[
      { channel: "isolated-channel" },
      { contact_id: theirs.contact_id as string },
      { status: "open", unread: true, channel: "isolated-channel" },
    ]) {
      const response = await api.get("/open/v1/conversations", { key, query: { limit: 100, ...query } });
      expect(response.body.data, JSON.stringify(query)).toEqual([]);
    }
    const all = await api.get("/open/v1/conversations", { key, query: { limit: 100 } });
    expect(all.body.data.map((c: Conversation) => c.id)).not.toContain(theirs.id);
  });

  it("a foreign conversation on a ticket is 400 parameter_invalid", async () => {
    for (const response of [
      await api.post("/open/v1/tickets", { key, body: { subject: "Link", conversation_id: theirs.id } }),
      await api.post("/open/v1/tickets", { key, body: { subject: "Link", conversation_id: newId("conv") } }),
    ]) {
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: "parameter_invalid", param: "conversation_id" });
    }
    const own = await openConversation(workspaceId, key);
    const linked = await api.post("/open/v1/tickets", {
      key,
      body: { subject: "Link", conversation_id: own.id },
    });
    expect(linked.status).toBe(201);
    expect(linked.body.conversation_id).toBe(own.id);
  });
});
