import { beforeAll, describe, expect, inject, it } from "vitest";
import { newId } from "../src/platform/ids.js";
import { admin, api, newWorkspace, request } from "./helpers/api.js";
import { newContact, openConversation } from "./helpers/conversations.js";

type Conversation = Record<string, any> & { id: string };

let key: string;
let workspaceId: string;

beforeAll(async () => {
  ({ key, workspaceId } = await newWorkspace());
});

const conversationsPath = (ws: string) => `/admin/v1/workspaces/${ws}/conversations`;
const setAssignees = (id: string, assigneeIds: unknown) =>
  admin("PUT", `/admin/v1/conversations/${id}/assignees`, { assignee_ids: assigneeIds });
const publicView = async (id: string): Promise<Conversation> =>
  (await api.get(`/open/v1/conversations/${id}`, { key })).body;
const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe("createConversation: opening, and contacts or workspaces it may not use", () => {
  it("opens an unread conversation with the first customer message; subject is optional", async () => {
    const contactId = await newContact(key);
    const response = await admin("POST", conversationsPath(workspaceId), {
      contact_id: contactId,
      channel: "chat",
      message: { body: "Hi there" },
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      object: "conversation",
      status: "open",
      channel: "chat",
      contact_id: contactId,
      subject: null,
      unread: true,
      assignee_ids: [],
      closed_at: null,
      last_message_at: response.body.created_at,
    });
    expect(await publicView(response.body.id)).toEqual(response.body);
    const messages = await api.get(`/open/v1/conversations/${response.body.id}/messages`, { key });
    expect(messages.body.data).toMatchObject([
      { body: "Hi there", direction: "inbound", author_type: "customer", internal_note: false },
    ]);
  });

  it("a contact of another workspace, or none, is 400 parameter_invalid on contact_id; nothing is created", async () => {
    const { key: theirKey } = await newWorkspace();
    const theirContact = await newContact(theirKey);
    for (const contactId of [theirContact, newId("con")]) {
      const response = await admin("POST", conversationsPath(workspaceId), {
        contact_id: contactId,
        channel: "email",
        message: { body: "Hello" },
      });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: "parameter_invalid", param: "contact_id" });
    }
    const listed = await api.get("/open/v1/conversations", { key, query: { contact_id: theirContact } });
    expect(listed.body.data).toEqual([]);
  });

  it("an unknown workspace is 404 resource_missing", async () => {
    const contactId = await newContact(key);
    const response = await admin("POST", conversationsPath(newId("ws")), {
      contact_id: contactId,
      channel: "email",
      message: { body: "Hello" },
    });
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe("resource_missing");
  });
});

describe("createConversation: refused bodies, and replays", () => {
  it.each<[string, Record<string, unknown>, string, string]>([
    ["no message", { channel: "email" }, "parameter_missing", "message"],
    ["no channel", { message: { body: "x" } }, "parameter_missing", "channel"],
    ["an empty channel", { channel: "", message: { body: "x" } }, "parameter_invalid", "channel"],
    [
      "an empty message body",
      { channel: "email", message: { body: "" } },
      "parameter_invalid",
      "message.body",
    ],
    [
      "an empty subject",
      { channel: "email", subject: "", message: { body: "x" } },
      "parameter_invalid",
      "subject",
    ],
    [
      "an unknown field",
      { channel: "email", message: { body: "x" }, status: "closed" },
      "parameter_unknown",
      "status",
    ],
    [
      "an unknown message field",
      { channel: "email", message: { body: "x", internal_note: true } },
      "parameter_unknown",
      "message.internal_note",
    ],
  ])("rejects %s", async (_name, fields, code, param) => {
    const contactId = await newContact(key);
    const response = await admin("POST", conversationsPath(workspaceId), {
      contact_id: contactId,
      ...fields,
    });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code, param });
  });

  it("is idempotent: a replay creates no second conversation", async () => {
    const contactId = await newContact(key);
    const body = { contact_id: contactId, channel: "sms", message: { body: "Once" } };
    const post = () =>
      request("POST", conversationsPath(workspaceId), {
        body,
        headers: { Authorization: `Bearer ${inject("adminToken")}`, "Idempotency-Key": `open-${contactId}` },
      });
    const first = await post();
    const replay = await post();
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toEqual(first.body);
    const listed = await api.get("/open/v1/conversations", { key, query: { contact_id: contactId } });
    expect(listed.body.data.map((c: Conversation) => c.id)).toEqual([first.body.id]);
  });
});

describe("addCustomerMessage", () => {
  it("adds an inbound customer message: unread again, last_message_at moves, status stays", async () => {
    const { id } = await openConversation(workspaceId, key);
    await api.post(`/open/v1/conversations/${id}/messages`, {
      key,
      body: { body: "Done", internal_note: false },
    });
    const closed = (await admin("POST", `/admin/v1/conversations/${id}/close`)).body;
    expect(closed.unread).toBe(false);

    const response = await admin("POST", `/admin/v1/conversations/${id}/messages`, { body: "Not done!" });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.stringMatching(/^msg_/),
      object: "message",
      conversation_id: id,
      body: "Not done!",
      internal_note: false,
      direction: "inbound",
      author_type: "customer",
      created_at: expect.any(String),
      updated_at: response.body.created_at,
    });
    expect(await publicView(id)).toEqual({
      ...closed,
      unread: true,
      last_message_at: response.body.created_at,
      updated_at: response.body.created_at,
    });
  });

  it("an unknown conversation is 404; a bad body is 400", async () => {
    const missing = await admin("POST", `/admin/v1/conversations/${newId("conv")}/messages`, { body: "Hi" });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("resource_missing");
    const { id } = await openConversation(workspaceId, key);
    for (const [body, code, param] of [
      [{}, "parameter_missing", "body"],
      [{ body: "" }, "parameter_invalid", "body"],
      [{ body: "Hi", internal_note: true }, "parameter_unknown", "internal_note"],
    ] as const) {
      const response = await admin("POST", `/admin/v1/conversations/${id}/messages`, body);
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code, param });
    }
  });
});

describe("setConversationAssignees", () => {
  it("replaces the set; the same set in another order changes nothing; [] unassigns", async () => {
    const opened = await openConversation(workspaceId, key);
    await pause(5); // so that a write would show in updated_at
    const assigned = await setAssignees(opened.id, ["agent_1", "agent_2"]);
    expect(assigned.status).toBe(200);
    expect(assigned.body).toEqual({
      ...opened,
      assignee_ids: ["agent_1", "agent_2"],
      updated_at: expect.any(String),
    });
    expect(assigned.body.updated_at > opened.updated_at).toBe(true);

    await pause(5);
    const same = await setAssignees(opened.id, ["agent_2", "agent_1"]);
    expect(same.status).toBe(200);
    expect(same.body).toEqual(assigned.body);

    const changed = await setAssignees(opened.id, ["agent_2", "agent_3"]);
    expect(changed.body.assignee_ids).toEqual(["agent_2", "agent_3"]);
    const subset = await setAssignees(opened.id, ["agent_2"]);
    expect(subset.body.assignee_ids).toEqual(["agent_2"]);
    const none = await setAssignees(opened.id, []);
    expect(none.body.assignee_ids).toEqual([]);
    expect(none.body.updated_at >= subset.body.updated_at).toBe(true);
    await pause(5);
    expect((await setAssignees(opened.id, [])).body).toEqual(none.body);
    expect(await publicView(opened.id)).toEqual(none.body);
  });

  it("works on a conversation of any workspace; an unknown one is 404", async () => {
    const { key: otherKey, workspaceId: other } = await newWorkspace();
    const theirs = await openConversation(other, otherKey);
    expect((await setAssignees(theirs.id, ["agent_9"])).body.assignee_ids).toEqual(["agent_9"]);
    const missing = await setAssignees(newId("conv"), ["agent_9"]);
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("resource_missing");
  });

  it.each<[string, unknown, string, string]>([
    ["a duplicate", ["a", "a"], "parameter_invalid", "assignee_ids"],
    ["an empty id", [""], "parameter_invalid", "assignee_ids[0]"],
    ["a number", [7], "parameter_invalid", "assignee_ids[0]"],
    ["no array", "agent_1", "parameter_invalid", "assignee_ids"],
  ])("rejects %s", async (_name, assigneeIds, code, param) => {
    const opened = await openConversation(workspaceId, key);
    const response = await setAssignees(opened.id, assigneeIds);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code, param });
    expect(await publicView(opened.id)).toEqual(opened);
  });
});

describe("close and reopen", () => {
  it("close stamps closed_at; closing again changes nothing; reopen clears it; reopening again changes nothing", async () => {
    const opened = await openConversation(workspaceId, key);
    const close = () => admin("POST", `/admin/v1/conversations/${opened.id}/close`);
    const reopen = () => admin("POST", `/admin/v1/conversations/${opened.id}/reopen`);

    const closed = await close();
    expect(closed.status).toBe(200);
    expect(closed.body).toEqual({
      ...opened,
      status: "closed",
      closed_at: expect.any(String),
      updated_at: closed.body.closed_at,
    });
    await pause(5);
    expect((await close()).body).toEqual(closed.body);
    const listed = await api.get("/open/v1/conversations", { key, query: { status: "closed", limit: 100 } });
    expect(listed.body.data.map((c: Conversation) => c.id)).toContain(opened.id);

    await pause(5);
    const reopened = await reopen();
    expect(reopened.status).toBe(200);
    expect(reopened.body).toEqual({
      ...opened,
      status: "open",
      closed_at: null,
      updated_at: expect.any(String),
    });
    expect(reopened.body.updated_at > closed.body.updated_at).toBe(true);
    await pause(5);
    expect((await reopen()).body).toEqual(reopened.body);
    expect(await publicView(opened.id)).toEqual(reopened.body);
  });

  it("an unknown conversation is 404", async () => {
    for (const action of ["close", "reopen"]) {
      const missing = await admin("POST", `/admin/v1/conversations/${newId("conv")}/${action}`);
      expect(missing.status).toBe(404);
      expect(missing.body.error.code).toBe("resource_missing");
    }
  });

  it("needs the admin token", async () => {
    const { id } = await openConversation(workspaceId, key);
    for (const [method, path] of [
      ["POST", conversationsPath(workspaceId)],
      ["POST", `/admin/v1/conversations/${id}/messages`],
      ["PUT", `/admin/v1/conversations/${id}/assignees`],
      ["POST", `/admin/v1/conversations/${id}/close`],
      ["POST", `/admin/v1/conversations/${id}/reopen`],
    ] as const) {
      const response = await request(method, path, { key });
      expect(response.status, path).toBe(401);
      expect(response.body.error.code).toBe("invalid_api_key");
    }
    expect((await publicView(id)).status).toBe("open");
  });
});
