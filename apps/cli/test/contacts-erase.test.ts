// `deskline contacts erase`: the built binary against the run's real server, as a shell runs it.
import { api, newWorkspace } from "@deskline/test-kit";
import { describe, expect, it } from "vitest";
import { cli } from "./helpers.js";

describe("deskline contacts erase", () => {
  it("erases each contact given, a line each (the marker with --json), and answers the same again", async () => {
    const { key } = await newWorkspace();
    const made = async (name: string) =>
      (await api.post("/open/v1/contacts", { key, body: { name, email: `${name}@example.com` } })).body
        .id as string;
    const first = await made("erase-one");
    const second = await made("erase-two");

    const plain = await cli(["contacts", "erase", first, second], { key });
    expect(plain.code).toBe(0);
    const lines = plain.stdout.trim().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(new RegExp(`^erased ${first} at \\d{4}-\\d\\d-\\d\\dT`));
    expect(lines[1]).toMatch(new RegExp(`^erased ${second} at `));

    const again = await cli(["contacts", "erase", first, "--json"], { key });
    expect(again.code).toBe(0);
    const marker = JSON.parse(again.stdout);
    expect(marker).toEqual({ id: first, object: "contact", erased: true, erased_at: expect.any(String) });
    expect(lines[0]).toBe(`erased ${first} at ${marker.erased_at}`);
    expect((await api.get(`/open/v1/contacts/${first}`, { key })).status).toBe(404);

    const unknown = await cli(["contacts", "erase", "con_0000000000000000"], { key });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/resource_missing/);
  });
});
