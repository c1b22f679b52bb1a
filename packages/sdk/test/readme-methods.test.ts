import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { renderReadme } from "../scripts/readme-methods.js";

// The README's method table is generated from the SDK's source: a method added to a namespace
// and not in the table (`pnpm generate` not run) fails here.
it("the README's table of methods is the one the SDK's source gives (pnpm generate)", () => {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  expect(readme).toBe(renderReadme());
  // What the table once lacked is there now: a batch and the event type catalog.
  expect(readme).toContain("`batch(body)`");
  expect(readme).toContain("`types()`");
});
