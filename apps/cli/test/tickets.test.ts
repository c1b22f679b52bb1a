// `deskline tickets solve|close|cancel|set-status` by id and by filter, terminal tickets included,
// and the ticket resource commands, against the real server.
import { api, newWorkspace } from "@deskline/test-kit";
import { beforeEach, describe, expect, it } from "vitest";
import { cli, jsonLines, setting } from "./helpers.js";

let key: string;
beforeEach(async () => {
  ({ key } = await newWorkspace());
});

async function ticket(body: Record<string, unknown>): Promise<any> {
  const response = await api.post("/open/v1/tickets", { key, body: { subject: "Help", ...body } });
  expect(response.status).toBe(201);
  return response.body;
}

const statusOf = async (id: string) => (await api.get(`/open/v1/tickets/${id}`, { key })).body.status;

describe("tickets solve", () => {
  it("by id: open tickets are solved, Solved ones unchanged, Closed and Cancelled refused (exit 1)", async () => {
    const open = await ticket({ status: "On you" });
    const solved = await ticket({ status: "Solved" });
    const closed = await ticket({ status: "Closed" });
    const cancelled = await ticket({ status: "Cancelled" });
    const result = await cli(["tickets", "solve", open.id, solved.id, closed.id, cancelled.id, "--json"], {
      key,
    });
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({ status: "Solved", changed: 1, unchanged: 1, refused: 2, failed: 0 });
    const outcome = (id: string) => report.results.find((r: any) => r.id === id);
    expect(outcome(open.id)).toMatchObject({ outcome: "changed", from: "On you" });
    expect(outcome(solved.id)).toMatchObject({ outcome: "unchanged", from: "Solved" });
    expect(outcome(closed.id)).toMatchObject({
      outcome: "refused",
      from: "Closed",
      code: "ticket_status_terminal",
    });
    expect(outcome(cancelled.id).reason).toMatch(/Cancelled/);
    expect(await statusOf(open.id)).toBe("Solved");
    expect(await statusOf(closed.id)).toBe("Closed");
  });

  it('by filter: --status "On you" --tag billing solves every match and nothing else (exit 0)', async () => {
    const matches = [];
    for (let i = 0; i < 12; i++) matches.push(await ticket({ status: "On you", tags: ["billing", `n${i}`] }));
    const otherTag = await ticket({ status: "On you", tags: ["shipping"] });
    const otherStatus = await ticket({ status: "New", tags: ["billing"] });
    const result = await cli(["tickets", "solve", "--status", "On you", "--tag", "billing"], { key });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/changed\s+12/);
    for (const t of matches) expect(await statusOf(t.id)).toBe("Solved");
    expect(await statusOf(otherTag.id)).toBe("On you");
    expect(await statusOf(otherStatus.id)).toBe("New");
  });

  it("needs ids or filters (exit 2); an unknown id is a failure with the API's code (exit 1)", async () => {
    expect((await cli(["tickets", "solve"], { key })).code).toBe(2);
    // The executable's exit status itself.
    const result = await cli(["tickets", "solve", "tkt_0VbeYBCu9tPuFypVLWBsJN", "--json"], {
      key,
      process: true,
    });
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout).results[0]).toMatchObject({
      outcome: "failed",
      code: "resource_missing",
    });
  });
});

describe("other status moves", () => {
  it("close takes Solved tickets; cancel refuses them; set-status moves open ones anywhere", async () => {
    const solved = await ticket({ status: "Solved" });
    const open = await ticket({});
    expect((await cli(["tickets", "cancel", solved.id], { key })).code).toBe(1);
    expect(await statusOf(solved.id)).toBe("Solved");
    expect((await cli(["tickets", "close", solved.id], { key })).code).toBe(0);
    expect(await statusOf(solved.id)).toBe("Closed");
    expect((await cli(["tickets", "set-status", "On hold", open.id], { key })).code).toBe(0);
    expect(await statusOf(open.id)).toBe("On hold");
    expect((await cli(["tickets", "set-status", "Sleeping", open.id], { key })).code).toBe(2);
  });
});

describe("ticket resource commands", () => {
  it("create, get, update, list (JSON Lines, --limit across pages) and delete", async () => {
    const created = await cli(
      [
        "tickets",
        "create",
        ...setting("subject=Printer on fire", "priority=urgent", "tags=hw;fire"),
        "--json",
      ],
      { key },
    );
    expect(created.code).toBe(0);
    const t = JSON.parse(created.stdout);
    expect(t).toMatchObject({
      subject: "Printer on fire",
      priority: "urgent",
      tags: ["hw", "fire"],
      status: "New",
    });

    const shown = await cli(["tickets", "get", t.id], { key });
    expect(shown.stdout).toMatch(/subject\s+Printer on fire/);

    const updated = await cli(["tickets", "update", t.id, "--data", '{"priority":"low"}', "--json"], { key });
    expect(JSON.parse(updated.stdout).priority).toBe("low");

    for (let i = 0; i < 4; i++) await ticket({ priority: "low" });
    const listed = await cli(["tickets", "list", "--priority", "low", "--limit", "3", "--json"], { key });
    expect(jsonLines(listed.stdout)).toHaveLength(3);
    const table = await cli(["tickets", "list", "--priority", "low"], { key });
    expect(table.stdout.split("\n")[0]).toMatch(/^ID\s+STATUS\s+PRIORITY\s+SUBJECT/);
    expect(table.stdout.trim().split("\n")).toHaveLength(6);

    const deleted = await cli(["tickets", "delete", t.id, "--json"], { key });
    expect(JSON.parse(deleted.stdout)).toEqual({ id: t.id, object: "ticket", deleted: true });
    const missing = await cli(["tickets", "get", t.id], { key });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/status 404, code resource_missing(, param \w+)?, request id req_/);
  });
});
