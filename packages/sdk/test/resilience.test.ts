// Retries, Retry-After, idempotency keys across retries, timeouts, connection errors and the
// caller's signal, against a local server that misbehaves on purpose.
import { afterEach, describe, expect, it } from "vitest";
import {
  APIError,
  ConflictError,
  ConnectionError,
  createDesklineClient,
  Deskline,
  type DesklineOptions,
  InvalidRequestError,
  TimeoutError,
  VERSION,
} from "../src/index.js";
import { apiError, type MisbehavingServer, misbehavingServer, OK, type Step } from "./misbehaving-server.js";

let server: MisbehavingServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function scripted(steps: Step[], options: Partial<DesklineOptions> = {}) {
  server = await misbehavingServer(steps);
  return { deskline: new Deskline({ apiKey: "dk_test", baseUrl: server.baseUrl, ...options }), server };
}

/**
 * Gives up once the server holds the request: at a fixed 50 ms, on a loaded machine, the request
 * had not arrived yet and the server saw none.
 */
function abortOnceReceived(server: MisbehavingServer, controller: AbortController) {
  const check = setInterval(() => {
    if (server.received.length === 0) return;
    clearInterval(check);
    controller.abort(new Error("user gave up"));
  }, 10);
}

// Retry-After: 0 keeps these tests fast; the backoff itself is table-tested in retry.test.ts.
const now = { "Retry-After": "0" };

describe("retries: when and how often", () => {
  it.each([
    ["500", { ...apiError(500, "internal_error"), headers: now }],
    ["503", { ...apiError(503, "database_unavailable"), headers: now }],
    ["408", { ...apiError(408, "request_timeout", "invalid_request_error"), headers: now }],
    ["429", { ...apiError(429, "rate_limited", "rate_limit_error"), headers: now }],
    [
      "409 idempotency_key_in_flight",
      { ...apiError(409, "idempotency_key_in_flight", "invalid_request_error"), headers: now },
    ],
  ] as [string, Step][])("retries %s, then returns the success", async (_name, failure) => {
    const { deskline, server } = await scripted([failure, failure, OK]);
    await expect(deskline.contacts.get("con_x")).resolves.toMatchObject({ object: "contact" });
    expect(server.received).toHaveLength(3);
  });

  it("gives up after maxRetries and throws the last answer's error", async () => {
    const { deskline, server } = await scripted([{ ...apiError(500, "internal_error"), headers: now }], {
      maxRetries: 1,
    });
    const error = await deskline.contacts.get("con_x").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(APIError);
    expect(error).toMatchObject({ status: 500, code: "internal_error", requestId: "req_scripted" });
    expect(server.received).toHaveLength(2);
  });

  it.each([
    ["400", apiError(400, "parameter_invalid", "invalid_request_error"), InvalidRequestError],
    ["409 email_taken", apiError(409, "email_taken", "invalid_request_error"), ConflictError],
  ] as const)("does not retry %s", async (_name, failure, ErrorClass) => {
    const { deskline, server } = await scripted([failure, OK]);
    await expect(deskline.contacts.create({ name: "Ada" })).rejects.toBeInstanceOf(ErrorClass);
    expect(server.received).toHaveLength(1);
  });

  it("a per-call maxRetries overrides the client's", async () => {
    const { deskline, server } = await scripted([{ ...apiError(502, "bad_gateway"), headers: now }, OK]);
    await expect(deskline.contacts.get("con_x", { maxRetries: 0 })).rejects.toBeInstanceOf(APIError);
    expect(server.received).toHaveLength(1);
  });

  it("a per-call timeoutMs overrides the client's", async () => {
    const { deskline, server } = await scripted([{ hang: true }, OK], { timeoutMs: 60_000, maxRetries: 1 });
    await expect(deskline.contacts.get("con_x", { timeoutMs: 100 })).resolves.toMatchObject({
      object: "contact",
    });
    expect(server.received).toHaveLength(2);
  });
});

describe("retries: the raw client, Retry-After, and what each attempt sends", () => {
  it("the raw client retries too: the retries are a middleware on it, not its fetch", async () => {
    const unavailable: Step = { ...apiError(503, "database_unavailable"), headers: now };
    const { server } = await scripted([unavailable, OK, unavailable, OK, unavailable]);
    const raw = createDesklineClient({ apiKey: "dk_test", baseUrl: server.baseUrl });
    const answer = await raw.GET("/open/v1/contacts/{id}", { params: { path: { id: "con_x" } } });
    expect(answer.response.status).toBe(200);
    expect(server.received).toHaveLength(2);
    // A middleware added with `use` runs outside the retries: it sees the final answer.
    const seen: number[] = [];
    raw.use({
      onResponse: ({ response }) => {
        seen.push(response.status);
      },
    });
    await raw.GET("/open/v1/contacts/{id}", { params: { path: { id: "con_x" } } });
    expect(seen).toEqual([200]);
    expect(server.received).toHaveLength(4);
    // A fetch given for one call replaces the client's, retries included.
    const once = await raw.GET("/open/v1/contacts/{id}", {
      params: { path: { id: "con_x" } },
      fetch: (request: Request) => fetch(request),
    });
    expect(once.response.status).toBe(503);
    expect(server.received).toHaveLength(5);
  });

  it("waits as long as Retry-After says", async () => {
    const { deskline, server } = await scripted([
      { ...apiError(429, "rate_limited", "rate_limit_error"), headers: { "Retry-After": "1" } },
      OK,
    ]);
    await deskline.contacts.get("con_x");
    const [first, second] = server.received;
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(950);
  });

  it("sends one Idempotency-Key on every attempt of a POST, the caller's when given", async () => {
    const failure = { ...apiError(503, "database_unavailable"), headers: now };
    const { deskline, server } = await scripted([failure, failure, { status: 201, body: { id: "con_1" } }]);
    await deskline.contacts.create({ name: "Ada" });
    const keys = server.received.map((r) => r.headers["idempotency-key"]);
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(server.received.every((r) => r.body === JSON.stringify({ name: "Ada" }))).toBe(true);

    await deskline.contacts.create({ name: "Ada" }, { idempotencyKey: "my-key" });
    expect(server.received.at(-1)?.headers["idempotency-key"]).toBe("my-key");
    // Each new POST gets its own key; GETs get none.
    await deskline.contacts.create({ name: "Bob" });
    expect(server.received.at(-1)?.headers["idempotency-key"]).not.toBe(keys[0]);
    await deskline.contacts.get("con_1");
    expect(server.received.at(-1)?.headers["idempotency-key"]).toBeUndefined();
  });

  it("names the SDK and its version, and sends the API key", async () => {
    const { deskline, server } = await scripted([OK]);
    await deskline.contacts.get("con_x");
    expect(server.received[0]?.headers).toMatchObject({
      "user-agent": `Deskline-SDK/${VERSION}`,
      "deskline-sdk": `js/${VERSION}`,
      authorization: "Bearer dk_test",
    });
  });
});

describe("timeouts, connection errors and the caller's signal", () => {
  it("throws TimeoutError when no answer comes within timeoutMs, after its retries", async () => {
    const { deskline, server } = await scripted([{ hang: true }], { timeoutMs: 100, maxRetries: 1 });
    const error = await deskline.contacts.get("con_x").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(server.received).toHaveLength(2);
  });

  it("retries a timed-out attempt and returns the next answer", async () => {
    const { deskline } = await scripted([{ hang: true }, OK], { timeoutMs: 100 });
    await expect(deskline.contacts.get("con_x")).resolves.toMatchObject({ object: "contact" });
  });

  it("throws ConnectionError when the connection drops, after retrying", async () => {
    const { deskline, server } = await scripted([{ drop: true }], { maxRetries: 1 });
    const error = await deskline.contacts.get("con_x").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(server.received).toHaveLength(2);
  });

  it("throws ConnectionError when nothing listens", async () => {
    const { server } = await scripted([OK]);
    const { baseUrl } = server;
    await server.close();
    const deskline = new Deskline({ apiKey: "dk_test", baseUrl, maxRetries: 0 });
    await expect(deskline.contacts.get("con_x")).rejects.toBeInstanceOf(ConnectionError);
  });

  it("honours the caller's signal: rejects with its reason and stops retrying", async () => {
    const { deskline, server } = await scripted([{ hang: true }]);
    const controller = new AbortController();
    const pending = deskline.contacts.get("con_x", { signal: controller.signal });
    abortOnceReceived(server, controller);
    await expect(pending).rejects.toThrow("user gave up");
    expect(server.received).toHaveLength(1);
  });

  it("the raw client honours a call's signal too", async () => {
    const { server } = await scripted([{ hang: true }]);
    const raw = createDesklineClient({ apiKey: "dk_test", baseUrl: server.baseUrl });
    const controller = new AbortController();
    abortOnceReceived(server, controller);
    await expect(
      raw.GET("/open/v1/contacts/{id}", { params: { path: { id: "con_x" } }, signal: controller.signal }),
    ).rejects.toThrow("user gave up");
    expect(server.received).toHaveLength(1);
  });

  it("uses a caller's fetch instead of undici", async () => {
    const { server } = await scripted([OK]);
    const seen: string[] = [];
    const deskline = new Deskline({
      apiKey: "dk_test",
      baseUrl: server.baseUrl,
      fetch: (input, init) => {
        seen.push(`${init.method} ${input}`);
        return fetch(input, init);
      },
    });
    await deskline.contacts.get("con_x");
    expect(seen).toEqual([`GET ${server.baseUrl}/open/v1/contacts/con_x`]);
  });
});

describe("the answers the raw client hands back", () => {
  it("read as json, text, arrayBuffer and blob, and clone", async () => {
    const { server } = await scripted([OK]);
    const raw = createDesklineClient({ apiKey: "dk_test", baseUrl: server.baseUrl });
    const get = (parseAs: "json" | "text" | "arrayBuffer" | "blob") =>
      raw.GET("/open/v1/contacts/{id}", { params: { path: { id: "con_x" } }, parseAs });
    const expected = JSON.stringify((OK as { body: unknown }).body);
    const { data: json, response } = await get("json");
    expect(json).toEqual(JSON.parse(expected));
    expect(response).toBeInstanceOf(Response);
    expect(await response.clone().text()).toBe(expected);
    expect((await get("text")).data).toBe(expected);
    expect(new TextDecoder().decode((await get("arrayBuffer")).data as ArrayBuffer)).toBe(expected);
    const blob = (await get("blob")).data as Blob;
    expect([await blob.text(), blob.type]).toEqual([expected, "application/json"]);
  });
});
