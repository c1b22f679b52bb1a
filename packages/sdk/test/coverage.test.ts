// Every operation of the public spec has an SDK method: a new spec operation fails this test
// until a line in src/resources.ts builds a method for it. The test reads those lines (each
// resource method is `name = this.<builder>(…"path")`), so the SDK carries nothing for it.
import { readFileSync } from "node:fs";
import { specOperations } from "@deskline/test-kit";
import { describe, expect, it } from "vitest";

// The spec documents and the probes are for tools and load balancers, the reference page for
// people: none is for app code.
const NOT_FOR_THE_SDK = new Set([
  "getOpenApiYaml",
  "getOpenApiJson",
  "getApiReference",
  "getHealth",
  "getReadiness",
]);

/** The HTTP method each builder of src/resources.ts sends (`byId` names its own). */
const BUILDER_METHOD: Record<string, string> = {
  lister: "GET",
  nestedLister: "GET",
  reader: "GET",
  puller: "GET",
  creator: "POST",
  optionalCreator: "POST",
  nestedCreator: "POST",
  action: "POST",
  bodilessAction: "POST",
  updater: "PATCH",
  recoverer: "POST",
  recoveryPreviewer: "POST",
  searcher: "POST",
};

/** `METHOD path` of every operation a resource method of src/resources.ts is built on. */
function coveredOperations(): string[] {
  const source = readFileSync(new URL("../src/resources.ts", import.meta.url), "utf8");
  const built = source.matchAll(/= this\.(\w+)\((?:"(get|delete)", )?"(\/[^"]*)"\)/g);
  const covered = new Set<string>();
  for (const [, builder, method, path] of built) {
    const verb = builder === "byId" ? method?.toUpperCase() : BUILDER_METHOD[builder as string];
    expect(verb, `the builder ${builder} of ${path}`).toBeDefined();
    covered.add(`${verb} ${path}`);
  }
  return [...covered];
}

describe("SDK coverage of the spec", () => {
  it("has a method for every public operation", () => {
    const wanted = specOperations
      .filter((op) => !op.path.startsWith("/admin/") && !NOT_FOR_THE_SDK.has(op.operationId))
      .map((op) => `${op.method} ${op.path}`)
      .sort();
    expect(wanted.length).toBeGreaterThan(15);
    expect(coveredOperations().sort()).toEqual(wanted);
  });
});
