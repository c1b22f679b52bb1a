import { BSON } from "mongodb";
import { describe, expect, it } from "vitest";
import { madeAt, relativeToNow, shiftTimes } from "./helpers/fixture-times.js";

/** The fixture loader that keeps stored times relative to now (helpers/fixture-times.ts). */
describe("fixture times", () => {
  const made = new Date("2026-11-27T09:35:30.000Z");
  const fixture = {
    contact: { created_at: new Date(made.getTime() - 5_000), updated_at: made, id: "con_1" },
    key: { expires_at: new Date(made.getTime() + 86_400_000), oid: new BSON.ObjectId() },
    answer: { body: { created_at: "2026-11-27T09:35:30.000Z", name: "2026-11-27 is no time" } },
  };

  it("takes the moment a fixture was made from its latest created_at or updated_at", () => {
    expect(madeAt(fixture)).toBe(made.getTime());
    expect(() => madeAt({ expires_at: made })).toThrow(/no created_at/);
  });

  it.each([
    ["a later day", Date.parse("2027-01-26T00:00:00Z")],
    ["an earlier day", Date.parse("2025-01-01T00:00:00Z")],
  ])("moves every time by one offset, keeping their gaps, on %s", (_day, now) => {
    const moved = relativeToNow(fixture, now);
    expect(moved.contact.updated_at.getTime()).toBe(now);
    expect(moved.contact.created_at.getTime()).toBe(now - 5_000);
    expect(moved.key.expires_at.getTime()).toBe(now + 86_400_000);
    expect(moved.answer.body.created_at).toBe(new Date(now).toISOString());
    expect(moved.answer.body.name).toBe(fixture.answer.body.name);
    expect(moved.key.oid).toBe(fixture.key.oid);
    expect(moved.contact.id).toBe("con_1");
  });

  it("leaves the original as it was", () => {
    shiftTimes(fixture, 1_000);
    expect(fixture.contact.updated_at).toEqual(made);
  });
});
