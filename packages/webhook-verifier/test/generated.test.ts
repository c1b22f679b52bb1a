// The committed types are what the spec generates today (their type-level behaviour is tested in
// events.test-d.ts).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { OUTPUT, render } from "../scripts/generate-types.js";

describe("types generated from spec/openapi.yaml", () => {
  it("are up to date (run `pnpm -F @deskline/webhook-verifier generate` after changing the spec)", async () => {
    expect(readFileSync(OUTPUT, "utf8")).toBe(await render());
  });
});
