import { beforeAll, describe, expect, inject, it } from "vitest";
import { admin, api, newWorkspace } from "./helpers/api.js";
import { openConversation } from "./helpers/conversations.js";
import { allEvents, eventsAbout, theEvent } from "./helpers/events.js";

// The two conversation events, through the admin ingress (the channels' stand-in) and the public
// send: `message.received` for customer messages only, `conversation.assigned` when the set of
// assignees changes. Read back through the events API, `data` exactly as the API answered.

let workspaceId: string;
let key: string;
beforeAll(async () => {
  ({ workspaceId, key } = await newWorkspace());
});

const assign = (id: string, assigneeIds: string[]) =>
  admin("PUT", `/admin/v1/conversations/${id}/assignees`, { assignee_ids: assigneeIds });

async function messagesOf(conversationId: string) {
  const page = await api.get(`/open/v1/conversations/${conversationId}/messages`, {
    key,
    query: { limit: 100 },
  });
  expect(page.status).toBe(200);
  return page.body.data as Record<string, unknown>[];
}

describe("message.received", () => {
  it("a new conversation's first message is received, as listMessages shows it", async () => {
    const conversation = await openConversation(workspaceId, key, { body: "My order is late." });
    const [first] = await messagesOf(conversation.id);
    const event = await theEvent(key, "message.received", first?.id as string);
    expect(event.data).toEqual(first);
    expect(event.data).toMatchObject({
      conversation_id: conversation.id,
      direction: "inbound",
      author_type: "customer",
    });
    expect(event).not.toHaveProperty("previous_attributes");
  });

  it("a later customer message is received, as addCustomerMessage answered it", async () => {
    const conversation = await openConversation(workspaceId, key);
    const added = await admin("POST", `/admin/v1/conversations/${conversation.id}/messages`, {
      body: "Any news?",
    });
    expect(added.status).toBe(201);
    const event = await theEvent(key, "message.received", added.body.id);
    expect(event.data).toEqual(added.body);
  });

  it("agent replies and internal notes sent through the API are not received", async () => {
    const conversation = await openConversation(workspaceId, key);
    const path = `/open/v1/conversations/${conversation.id}/messages`;
    const reply = await api.post(path, { key, body: { body: "On it.", internal_note: false } });
    const note = await api.post(path, { key, body: { body: "Check stock.", internal_note: true } });
    expect([reply.status, note.status]).toEqual([201, 201]);
    const received = await allEvents(key, { type: "message.received" });
    const about = received.map((event) => event.data.id);
    expect(about).not.toContain(reply.body.id);
    expect(about).not.toContain(note.body.id);
  });

  it("an idempotent replay of a customer message is received once", async () => {
    const conversation = await openConversation(workspaceId, key);
    const path = `/admin/v1/conversations/${conversation.id}/messages`;
    const headers = {
      Authorization: `Bearer ${inject("adminToken")}`,
      "Idempotency-Key": `received-${Date.now()}`,
    };
    const first = await api.post(path, { headers, body: { body: "Twice?" } });
    const replay = await api.post(path, { headers, body: { body: "Twice?" } });
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body.id).toBe(first.body.id);
    await theEvent(key, "message.received", first.body.id);
  });
});

describe("conversation.assigned", () => {
  it("carries the conversation after the change and the assignees before it", async () => {
    const conversation = await openConversation(workspaceId, key);
    const assigned = await assign(conversation.id, ["agent_1", "agent_2"]);
    expect(assigned.status).toBe(200);
    const event = await theEvent(key, "conversation.assigned", conversation.id);
    expect(event.data).toEqual(assigned.body);
    expect(event.previous_attributes).toEqual({ assignee_ids: [] });
    const fetched = await api.get(`/open/v1/conversations/${conversation.id}`, { key });
    expect(event.data).toEqual(fetched.body);
  });

  it("the same assignees (in any order) emit nothing; a new set and unassigning do", async () => {
    const conversation = await openConversation(workspaceId, key);
    await assign(conversation.id, ["agent_1", "agent_2"]);
    const same = await assign(conversation.id, ["agent_2", "agent_1"]);
    expect(same.status).toBe(200);
    const swapped = await assign(conversation.id, ["agent_3"]);
    const cleared = await assign(conversation.id, []);
    expect((await assign(conversation.id, [])).status).toBe(200);

    const events = await eventsAbout(key, conversation.id, "conversation.assigned");
    expect(events.map((event) => event.previous_attributes)).toEqual([
      { assignee_ids: [] },
      { assignee_ids: ["agent_1", "agent_2"] },
      { assignee_ids: ["agent_3"] },
    ]);
    expect(events[1]?.data).toEqual(swapped.body);
    expect(events[2]?.data).toEqual(cleared.body);
  });

  it("concurrent assignments each record the state they produced, once each", async () => {
    const conversation = await openConversation(workspaceId, key);
    const sets = [["a"], ["b"], ["c"], ["d"], ["e"]];
    const answers = await Promise.all(sets.map((set) => assign(conversation.id, set)));
    for (const answer of answers) expect(answer.status).toBe(200);
    const events = await eventsAbout(key, conversation.id, "conversation.assigned");
    expect(events).toHaveLength(sets.length);
    // Chained: each event's previous assignees are the ones the event before it set.
    let previous: unknown = [];
    for (const event of events) {
      expect(event.previous_attributes).toEqual({ assignee_ids: previous });
      previous = event.data.assignee_ids;
    }
    const final = await api.get(`/open/v1/conversations/${conversation.id}`, { key });
    expect(final.body.assignee_ids).toEqual(previous);
  });
});
