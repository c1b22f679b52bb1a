// Each operation's `x-error-codes` (the codes it may answer, which docs/api.md and the SDK's
// `OperationErrorCode` are generated from) names only codes of the `ErrorCode` enum, each under a
// status the operation documents, and at least the codes its own shape implies. That the server
// answers no code an operation does not list is checked by every server test that sees an error
// (apps/server/test/helpers/api.ts `assertMatchesSpec`).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

type Json = Record<string, any>;
const read = (file: string) => parse(readFileSync(new URL(`../${file}`, import.meta.url), "utf8")) as Json;
const specs = { "openapi.yaml": read("openapi.yaml"), "admin.yaml": read("admin.yaml") };
const ERROR_CODES: string[] = specs["openapi.yaml"].components.schemas.ErrorCode.enum;

/** The status each code is answered with: a code listed needs that response on the operation. */
const STATUS_OF: Record<string, string> = {
  missing_api_key: "401",
  invalid_api_key: "401",
  insufficient_scope: "403",
  csrf_token_invalid: "403",
  resource_missing: "404",
  parameter_invalid: "400",
  parameter_missing: "400",
  parameter_unknown: "400",
  invalid_json: "400",
  invalid_body: "400",
  unsupported_media_type: "415",
  body_too_large: "413",
  body_too_deep: "400",
  email_taken: "409",
  external_id_taken: "409",
  idempotency_key_reused: "422",
  idempotency_key_in_flight: "409",
  idempotency_key_other_caller: "422",
  idempotency_replay_unavailable: "409",
  ticket_status_terminal: "409",
  concurrent_update: "409",
  merge_conflict: "409",
  custom_field_key_taken: "409",
  custom_field_limit_reached: "409",
  webhook_endpoint_disabled: "409",
  webhook_endpoint_limit_reached: "409",
  webhook_recovery_in_progress: "409",
  url_address_refused: "400",
  console_public_url_required: "409",
  rate_limited: "429",
  database_unavailable: "503",
  // The admin API turned off (no ADMIN_TOKEN): a 404 as for a path that does not exist.
  route_not_found: "404",
};

/** Whether the operation documents the status `code` is answered with (500 is allowed everywhere). */
const documents = (responses: Json, code: string) =>
  code === "internal_error" || String(STATUS_OF[code]) in responses || "default" in responses;

const operations = Object.entries(specs).flatMap(([file, spec]) =>
  Object.entries(spec.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json)
      .filter(([, operation]) => operation?.operationId)
      .map(([method, operation]) => ({
        file,
        path,
        method,
        item: item as Json,
        operation: operation as Json,
      })),
  ),
);
const ids = operations.map(({ operation }) => operation.operationId as string);

/** The codes an operation's shape implies: its body, its Idempotency-Key, its auth, its id's 404. */
function impliedCodes({ file, path, item, operation }: (typeof operations)[number]): string[] {
  const spec = specs[file as keyof typeof specs];
  const parameters = JSON.stringify([...(operation.parameters ?? []), ...(item.parameters ?? [])]);
  const security = operation.security ?? spec.security ?? [];
  const secured = security.some((entry: Json) => Object.keys(entry).length > 0);
  const responses = operation.responses as Json;
  return [
    ...(operation.requestBody
      ? ["invalid_json", "parameter_invalid", "body_too_large", "body_too_deep", "unsupported_media_type"]
      : []),
    ...(parameters.includes("IdempotencyKey")
      ? ["idempotency_key_in_flight", "idempotency_key_reused", "idempotency_key_other_caller"]
      : []),
    ...(secured ? ["missing_api_key", "invalid_api_key"] : []),
    ...(secured && file === "openapi.yaml" ? ["insufficient_scope"] : []),
    ...(path.includes("{") && "404" in responses ? ["resource_missing"] : []),
    ...("429" in responses ? ["rate_limited"] : []),
    ...("503" in responses ? ["database_unavailable"] : []),
    "internal_error",
  ];
}

describe("x-error-codes", () => {
  it("knows the status of every ErrorCode", () => {
    // Parser-level codes belong to no operation; method_not_allowed to no operation's method.
    const noOperation = ["header_too_large", "invalid_http_request", "request_timeout", "method_not_allowed"];
    const anyOperation = ["internal_error"];
    expect([...Object.keys(STATUS_OF), ...noOperation, ...anyOperation].sort()).toEqual(
      [...ERROR_CODES].sort(),
    );
  });

  it.each(ids)("%s lists its codes: ErrorCode values, once each, in the enum's order", (id) => {
    const codes = operations.find(({ operation }) => operation.operationId === id)?.operation[
      "x-error-codes"
    ];
    expect(Array.isArray(codes) && codes.length > 0, `${id} has no x-error-codes`).toBe(true);
    expect(codes.filter((code: string) => !ERROR_CODES.includes(code))).toEqual([]);
    expect(codes).toEqual(ERROR_CODES.filter((code) => codes.includes(code)));
  });

  it.each(ids)("%s documents the status of each code it lists, and lists what its shape implies", (id) => {
    const entry = operations.find(
      ({ operation }) => operation.operationId === id,
    ) as (typeof operations)[number];
    const codes: string[] = entry.operation["x-error-codes"] ?? [];
    const responses = entry.operation.responses as Json;
    const undocumented = codes.filter((code) => !documents(responses, code));
    expect(undocumented, `${id} lists codes whose status it does not document`).toEqual([]);
    expect(impliedCodes(entry).filter((code) => !codes.includes(code))).toEqual([]);
  });
});
