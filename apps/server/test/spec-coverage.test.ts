import { describe, expect, it } from "vitest";
import { request } from "./helpers/api.js";
import { specOperations } from "./helpers/contract.js";

// Every operation the spec documents has a route: unauthenticated, a served route answers 401
// (or 200 for the public ones), never route_not_found.

describe("every operation of the spec has a route", () => {
  it.each(specOperations.map((operation) => [operation.operationId, operation] as const))(
    "%s",
    async (id, operation) => {
      const path = operation.path.replace(/\{\w+\}/g, "x_0000000000000000000000");
      const response = await request(operation.method, path);
      expect(response.body?.error?.code, `${id} ${operation.method} ${operation.path}`).not.toBe(
        "route_not_found",
      );
    },
  );
});
