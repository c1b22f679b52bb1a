// Every operation of the public spec has an SDK method: a new spec operation fails this test
// until a line in src/resources.ts calls it.
import { describe, expect, it } from "vitest";
import { specOperations } from "../../../apps/server/test/helpers/contract.js";
import { Deskline } from "../src/index.js";
import { coveredOperations } from "../src/resources.js";

// The spec documents and the probes are for tools and load balancers, the reference page for
// people: none is for app code.
const NOT_FOR_THE_SDK = new Set([
  "getOpenApiYaml",
  "getOpenApiJson",
  "getApiReference",
  "getHealth",
  "getReadiness",
]);

describe("SDK coverage of the spec", () => {
  it("has a method for every public operation", () => {
    new Deskline({ apiKey: "dk_x", baseUrl: "http://127.0.0.1:1" });
    const wanted = specOperations
      .filter((op) => !op.path.startsWith("/admin/") && !NOT_FOR_THE_SDK.has(op.operationId))
      .map((op) => `${op.method} ${op.path}`)
      .sort();
    expect(wanted.length).toBeGreaterThan(15);
    expect([...coveredOperations].sort()).toEqual(wanted);
  });
});
