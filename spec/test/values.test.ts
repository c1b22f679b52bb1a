// The generator refuses an `x-transitions` that does not fit its enum, and the generated values
// module is what the server imports at run time: plain JavaScript, loaded by the package's name.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { transitionsOf } from "../scripts/values.js";

describe("x-transitions", () => {
  const statuses = { enum: ["open", "done"] };

  it("is refused unless it names every value once and moves only to other values of the enum", () => {
    expect(() => transitionsOf("S", { ...statuses, "x-transitions": { open: ["done"] } })).toThrow(
      /every value/,
    );
    expect(() =>
      transitionsOf("S", { ...statuses, "x-transitions": { open: ["closed"], done: [] } }),
    ).toThrow(/'open' names 'closed'/);
    expect(() => transitionsOf("S", { ...statuses, "x-transitions": { open: ["open"], done: [] } })).toThrow(
      /'open' names 'open'/,
    );
    expect(transitionsOf("S", { ...statuses, "x-transitions": { done: [], open: ["done"] } })).toEqual({
      open: ["done"],
      done: [],
    });
  });
});

describe("@deskline/spec/values", () => {
  it("loads with plain node by the package's name and holds the spec's ticket statuses and moves", () => {
    const script =
      'import("@deskline/spec/values").then((v) => console.log(JSON.stringify([v.schemaEnums.TicketStatus, v.schemaTransitions.TicketStatus])))';
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
      cwd: import.meta.dirname,
      encoding: "utf8",
    });
    const spec = parse(readFileSync(new URL("../openapi.yaml", import.meta.url), "utf8"));
    const status = spec.components.schemas.TicketStatus;
    expect(JSON.parse(out)).toEqual([status.enum, status["x-transitions"]]);
    // A Node start and the whole spec parsed: over vitest's 5 s default on two loaded cores.
  }, 30_000);
});
