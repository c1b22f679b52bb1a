import { expect } from "vitest";
import type { ApiResponse } from "./api.js";

/** 403 `insufficient_scope`, naming the scope the key lacks. */
export function expectInsufficientScope(response: ApiResponse, scope: string): void {
  expect(response.status, scope).toBe(403);
  expect(response.body.error).toMatchObject({ type: "permission_error", code: "insufficient_scope" });
  expect(response.body.error.message).toContain(scope);
}

/**
 * A foreign id's answer is exactly an unknown id's (404 resource_missing), apart from the id in
 * the message and the request id: probing ids of other workspaces reveals nothing.
 */
export function expectSameAsMissing(
  foreign: { response: ApiResponse; id: string },
  unknown: { response: ApiResponse; id: string },
): void {
  expect(foreign.response.status).toBe(404);
  const { request_id: _a, ...foreignError } = foreign.response.body.error;
  const { request_id: _b, ...unknownError } = unknown.response.body.error;
  expect({ ...foreignError, message: foreignError.message.replace(foreign.id, "ID") }).toEqual({
    ...unknownError,
    message: unknownError.message.replace(unknown.id, "ID"),
  });
}
