// Each error class from a real answer of the real server; the raw client returns errors instead.
import { newWorkspace, startTestServer, type TestServer } from "@deskline/test-kit";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  AuthenticationError,
  ConflictError,
  createDesklineClient,
  type Deskline,
  DesklineError,
  InvalidRequestError,
  NotFoundError,
  PermissionError,
  RateLimitError,
} from "../src/index.js";
import { checkedClient, specCheck, workspaceClient } from "./helpers.js";

let deskline: Deskline;
beforeAll(async () => {
  ({ deskline } = await workspaceClient());
});

/** The error a call rejects with (failing the test when it resolves). */
async function failure(promise: PromiseLike<unknown>): Promise<DesklineError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(DesklineError);
  return error as DesklineError;
}

describe("errors from real answers", () => {
  it("401 is an AuthenticationError with the body's code and the Request-Id", async () => {
    const error = await failure(checkedClient({ apiKey: "dk_unknown" }).contacts.list());
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ status: 401, code: "invalid_api_key", type: "authentication_error" });
    expect(error.requestId).toMatch(/^req_/);
    expect(error.raw).toMatchObject({ error: { code: "invalid_api_key", request_id: error.requestId } });
  });

  it("403 is a PermissionError", async () => {
    const { deskline: readOnly } = await workspaceClient(["contacts:read"]);
    const error = await failure(readOnly.contacts.create({ name: "Nope" }));
    expect(error).toBeInstanceOf(PermissionError);
    expect(error).toMatchObject({ status: 403, code: "insufficient_scope" });
  });

  it("404 is a NotFoundError naming the param", async () => {
    const error = await failure(deskline.tickets.get("tkt_doesnotexist"));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ status: 404, code: "resource_missing", param: "id" });
  });

  it("409 is a ConflictError, not retried", async () => {
    const first = await deskline.contacts.create({ name: "First", email: "taken@example.com" });
    const error = await failure(deskline.contacts.create({ name: "Second", email: "taken@example.com" }));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ status: 409, code: "email_taken", param: "email", holderId: first.id });
    // Only the value conflicts name a holder.
    const ticket = await deskline.tickets.create({ subject: "Done", status: "Closed" });
    const terminal = await failure(deskline.tickets.update(ticket.id, { status: "New" }));
    expect(terminal).toMatchObject({ code: "ticket_status_terminal", holderId: undefined });
  });

  it("400 and 422 are InvalidRequestErrors", async () => {
    const invalid = await failure(deskline.contacts.create({ name: "Bad", email: "not-an-email" }));
    expect(invalid).toBeInstanceOf(InvalidRequestError);
    expect(invalid).toMatchObject({ status: 400, code: "parameter_invalid", param: "email" });

    await deskline.contacts.create({ name: "Once" }, { idempotencyKey: "reused-key" });
    const reused = await failure(
      deskline.contacts.create({ name: "Other" }, { idempotencyKey: "reused-key" }),
    );
    expect(reused).toBeInstanceOf(InvalidRequestError);
    expect(reused).toMatchObject({ status: 422, code: "idempotency_key_reused" });
  });

  it("the raw client resolves to { error } instead of throwing", async () => {
    const { key } = await newWorkspace();
    const raw = createDesklineClient({ apiKey: key, baseUrl: inject("baseUrl") });
    raw.use(specCheck);
    const { data, error, response } = await raw.GET("/open/v1/contacts/{id}", {
      params: { path: { id: "con_missing" } },
    });
    expect(data).toBeUndefined();
    expect(response.status).toBe(404);
    expect(error?.error.code).toBe("resource_missing");
  });
});

describe("429 from a server with a tight rate limit", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      mongodbUri: inject("mongodbUri"),
      config: { rateLimitPerSecond: 1, rateLimitBurst: 1 },
    });
  });
  afterAll(() => server.stop());

  it("is a RateLimitError with retryAfter, once retries are spent", async () => {
    const { key } = await newWorkspace(undefined, server.baseUrl);
    const limited = checkedClient({ apiKey: key, baseUrl: server.baseUrl, maxRetries: 0 });
    await limited.contacts.list();
    const error = await failure(limited.contacts.list());
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ status: 429, code: "rate_limited", type: "rate_limit_error" });
    expect((error as RateLimitError).retryAfter).toBeGreaterThanOrEqual(1);

    // With retries, the SDK waits out Retry-After and succeeds.
    const patient = checkedClient({ apiKey: key, baseUrl: server.baseUrl, maxRetries: 2 });
    await expect(patient.contacts.list()).resolves.toMatchObject({ object: "list" });
  });
});
