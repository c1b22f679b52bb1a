// Inputs nobody means to send: each must be a 4xx with a stable code, store nothing, and leave the
// server serving. (Ordinary validation of each field is in request-errors.test.ts.)
import { connect } from "node:net";
import { afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { type ApiResponse, api, newWorkspace } from "./helpers/api.js";

let key: string;
beforeAll(async () => {
  ({ key } = await newWorkspace());
});

/**
 * Nothing a hostile request sent may be stored, and the server must still answer. What was stored
 * is removed after failing the test that stored it, so one failure does not fail every later test.
 */
afterEach(async () => {
  for (const path of ["/open/v1/contacts", "/open/v1/tickets"]) {
    const list = await api.get(path, { key });
    expect(list.status).toBe(200);
    for (const { id } of list.body.data) await api.delete(`${path}/${id}`, { key });
    expect(list.body.data, `${path} after a hostile request`).toEqual([]);
  }
});

const expectRefused = (response: ApiResponse, status: number, code: string, param?: string) => {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error.code, JSON.stringify(response.body)).toBe(code);
  if (param !== undefined) expect(response.body.error.param).toBe(param);
};

const postRaw = (path: string, rawBody: string, headers: Record<string, string> = {}) =>
  api.post(path, { key, rawBody, headers: { "Content-Type": "application/json", ...headers } });

describe("bodies: malformed, too deep, too large", () => {
  it.each([
    ["truncated", '{"name": "Ada",'],
    ["a trailing comma", '{"name": "Ada",}'],
    ["trailing garbage", '{"name": "Ada"} {}'],
    ["single quotes", "{'name': 'Ada'}"],
    ["a bare NaN", '{"name": "Ada", "custom_fields": {"n": NaN}}'],
    ["an unterminated string", '{"name": "Ada'],
  ])("broken JSON (%s) is 400 invalid_json", async (_label, raw) => {
    expectRefused(await postRaw("/open/v1/contacts", raw), 400, "invalid_json");
  });

  it("JSON nested deeper than 32 levels is 400 body_too_deep, the 1 MiB of it refused before it is parsed", async () => {
    // 524,000 levels is as deep as 1 MiB goes: parsed and walked, it held the server for seconds.
    const depth = 524_000;
    const raw = `{"name":"Deep","custom_fields":{"a":${"[".repeat(depth)}${"]".repeat(depth)}}}`;
    expect(Buffer.byteLength(raw)).toBeLessThan(1024 * 1024);
    expectRefused(await postRaw("/open/v1/contacts", raw), 400, "body_too_deep");
    // Unclosed, and brackets after the bound: still a count of what opens, not a parse.
    expectRefused(await postRaw("/open/v1/tickets", "[".repeat(depth)), 400, "body_too_deep");
    const justOver = `{"name":"Deep","x":${'{"x":'.repeat(32)}1${"}".repeat(32)}}`;
    expectRefused(await postRaw("/open/v1/contacts", justOver), 400, "body_too_deep");
  });

  it("brackets inside strings are text, not depth", async () => {
    const name = `${"[{".repeat(40)}\\"]`;
    const body = { name, custom_fields: { brackets: '\\"[[[{{' } };
    const created = await postRaw("/open/v1/contacts", JSON.stringify(body));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject(body);
    // Not hostile, but stored: removed here, as the check after each test wants nothing stored.
    expect((await api.delete(`/open/v1/contacts/${created.body.id}`, { key })).status).toBe(200);
  });

  it("an object nested 32 deep in an unknown field is 400 parameter_unknown", async () => {
    const raw = `{"name":"Deep","x":${'{"x":'.repeat(31)}1${"}".repeat(31)}}`;
    expectRefused(await postRaw("/open/v1/contacts", raw), 400, "parameter_unknown", "x");
  });

  it("a body of 1 MiB + 1 byte is 413, with Content-Length or chunked", async () => {
    const prefix = '{"name":"Big","notes":"';
    const suffix = '"}';
    const raw = prefix + "x".repeat(1024 * 1024 + 1 - prefix.length - suffix.length) + suffix;
    expect(Buffer.byteLength(raw)).toBe(1024 * 1024 + 1);
    expectRefused(await postRaw("/open/v1/tickets", raw), 413, "body_too_large");
    // Without a length the server finds out while reading.
    const chunked = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(raw));
        controller.close();
      },
    });
    const response = await fetch(new URL("/open/v1/tickets", inject("baseUrl")), {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: chunked,
      duplex: "half",
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(((await response.json()) as any).error.code).toBe("body_too_large");
  });
});

describe("bodies: content types, duplicate and prototype keys", () => {
  it.each([
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/json; charset=latin1",
  ])("Content-Type %s is 415", async (type) => {
    expectRefused(
      await postRaw("/open/v1/contacts", '{"name":"Typed"}', { "Content-Type": type }),
      415,
      "unsupported_media_type",
    );
  });

  it.each([
    ["at the top", '{"name":"First","name":"Second"}', "name"],
    ["in a nested object", '{"name":"Dup","custom_fields":{"a":1,"a":2}}', "custom_fields.a"],
    ["spelt differently", '{"name":"First","n\\u0061me":"Second"}', "name"],
  ])("a duplicate key (%s) is 400 invalid_json naming it", async (_label, raw, param) => {
    expectRefused(await postRaw("/open/v1/contacts", raw), 400, "invalid_json", param);
  });

  it.each([
    [
      "__proto__ at the top",
      '{"name":"Proto","__proto__":{"polluted":true}}',
      "parameter_unknown",
      "__proto__",
    ],
    [
      "constructor at the top",
      '{"name":"Proto","constructor":{"prototype":{"polluted":true}}}',
      "parameter_unknown",
      "constructor",
    ],
    [
      "__proto__ in custom_fields",
      '{"name":"Proto","custom_fields":{"__proto__":{"polluted":true}}}',
      "parameter_invalid",
      "custom_fields.__proto__",
    ],
    [
      "constructor.prototype in custom_fields",
      '{"name":"Proto","custom_fields":{"constructor":{"prototype":{"polluted":true}}}}',
      "parameter_invalid",
      "custom_fields.constructor",
    ],
    [
      "__proto__ in external_ids",
      '{"name":"Proto","external_ids":{"__proto__":"x"}}',
      "parameter_invalid",
      "external_ids.__proto__",
    ],
  ])("%s is refused and pollutes nothing", async (_label, raw, code, param) => {
    expectRefused(await postRaw("/open/v1/contacts", raw), 400, code, param);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("bodies: NUL bytes, surrogates and numbers", () => {
  it.each([
    ["a NUL byte in a value", '{"name":"Ada\\u0000Lovelace"}', "name"],
    ["a NUL byte in a key", '{"name":"Ada","custom_fields":{"a\\u0000b":1}}', "custom_fields"],
    ["a lone high surrogate", '{"name":"Ada \\ud800"}', "name"],
    ["a lone low surrogate", '{"name":"Ada \\udc00 Lovelace"}', "name"],
    ["a lone surrogate in a tag", '{"name":"Ada","tags":["ok","\\ud83d"]}', "tags[1]"],
  ])("%s is 400 parameter_invalid", async (_label, raw, param) => {
    const response = await postRaw("/open/v1/contacts", raw);
    expectRefused(response, 400, "parameter_invalid");
    expect(response.body.error.param.startsWith(param)).toBe(true);
  });

  it("a well-formed surrogate pair is accepted and read back unchanged", async () => {
    const created = await postRaw("/open/v1/contacts", '{"name":"Ada \\ud83d\\ude00"}');
    expect(created.status).toBe(201);
    expect(created.body.name).toBe("Ada 😀");
    expect((await api.get(`/open/v1/contacts/${created.body.id}`, { key })).body.name).toBe("Ada 😀");
    expect((await api.delete(`/open/v1/contacts/${created.body.id}`, { key })).status).toBe(200);
  });

  it.each([
    ["2^53 + 1", "9007199254740993"],
    ["-(2^53 + 1)", "-9007199254740993"],
    ["1e300", "1e300"],
    ["beyond a double", "1e400"],
  ])("a number beyond 2^53 (%s) is 400 parameter_invalid", async (_label, number) => {
    const raw = `{"name":"Numbers","custom_fields":{"n":${number}}}`;
    expectRefused(await postRaw("/open/v1/contacts", raw), 400, "parameter_invalid", "custom_fields.n");
  });

  it("2^53 - 1 and fractions are accepted exactly", async () => {
    const raw = '{"name":"Numbers","custom_fields":{"max":9007199254740991,"min":-9007199254740991,"f":0.1}}';
    const created = await postRaw("/open/v1/contacts", raw);
    expect(created.status).toBe(201);
    expect(created.body.custom_fields).toEqual({ max: 2 ** 53 - 1, min: -(2 ** 53 - 1), f: 0.1 });
    expect((await api.delete(`/open/v1/contacts/${created.body.id}`, { key })).status).toBe(200);
  });

  it.each([
    ["tags", { name: "Many", tags: Array.from({ length: 10_000 }, (_, i) => `t${i}`) }, "tags"],
    ["segments", { name: "Many", segments: Array.from({ length: 10_000 }, () => "s") }, "segments"],
    ["an unknown field", { name: "Many", list: Array.from({ length: 10_000 }, () => 1) }, "list"],
  ])("a 10,000-element array in %s is 400", async (_label, body, param) => {
    const response = await api.post("/open/v1/contacts", { key, body });
    expect(response.status).toBe(400);
    expect(response.body.error.param).toBe(param);
    expect(JSON.stringify(response.body).length).toBeLessThan(2000);
  });

  it.each([
    ["an operator object as contact_id", { subject: "Op", contact_id: { $gt: "" } }, "contact_id"],
    [
      "an operator object as conversation_id",
      { subject: "Op", conversation_id: { $ne: null } },
      "conversation_id",
    ],
    ["an operator string as contact_id", { subject: "Op", contact_id: '{"$gt":""}' }, "contact_id"],
    ["an operator object as status", { subject: "Op", status: { $in: ["New"] } }, "status"],
  ])("%s is 400 parameter_invalid", async (_label, body, param) => {
    expectRefused(await api.post("/open/v1/tickets", { key, body }), 400, "parameter_invalid", param);
  });
});

describe("query strings", () => {
  const list = (search: string) => api.get(`/open/v1/contacts?${search}`, { key });

  it.each([
    ["limit repeated", "limit=1&limit=2", "parameter_invalid", "limit"],
    ["email repeated", "email=a@example.com&email=b@example.com", "parameter_invalid", "email"],
    [
      "starting_after repeated",
      "starting_after=con_1&starting_after=con_2",
      "parameter_invalid",
      "starting_after",
    ],
    ["a bracketed name", "tag[]=vip", "parameter_unknown", "tag[]"],
    ["an operator in brackets", "email[$ne]=x", "parameter_unknown", "email[$ne]"],
    ["an operator in brackets on an id", "starting_after[$gt]=", "parameter_unknown", "starting_after[$gt]"],
    [
      "a JSON operator as the cursor",
      `starting_after=${encodeURIComponent('{"$gt":""}')}`,
      "parameter_invalid",
      "starting_after",
    ],
    ["limit beyond 2^53", "limit=9007199254740993", "parameter_invalid", "limit"],
    ["an empty cursor", "starting_after=", "parameter_invalid", "starting_after"],
  ])("%s is 400", async (_label, search, code, param) => {
    expectRefused(await list(search), 400, code, param);
  });

  it("repeated tags are all required, as documented", async () => {
    expect((await list("tag=a&tag=b")).status).toBe(200);
  });

  it.each([
    ["tickets", "/open/v1/tickets", `contact_id=${encodeURIComponent('{"$gt":""}')}`, "contact_id"],
    ["conversations", "/open/v1/conversations", "contact_id[$ne]=x", "contact_id[$ne]"],
  ])("an operator as the %s contact filter is 400", async (_label, path, search, param) => {
    const response = await api.get(`${path}?${search}`, { key });
    expect(response.status).toBe(400);
    expect(response.body.error.param).toBe(param);
  });

  it("an operator as a path id is 404 resource_missing", async () => {
    const id = encodeURIComponent('{"$gt":""}');
    expectRefused(await api.get(`/open/v1/contacts/${id}`, { key }), 404, "resource_missing");
    expectRefused(await api.delete(`/open/v1/tickets/${id}`, { key }), 404, "resource_missing");
  });
});

describe("headers", () => {
  /** Raw HTTP: fetch cannot send what a hostile client sends, and the answer may come before any route. */
  async function rawRequest(head: string): Promise<{ status: number; headers: string; body: string }> {
    const { hostname, port } = new URL(inject("baseUrl"));
    const socket = connect(Number(port), hostname);
    let received = "";
    socket.on("data", (chunk) => {
      received += chunk.toString("latin1");
    });
    socket.write(head);
    await new Promise((done) => socket.once("close", done).once("error", done));
    const [headers = "", body = ""] = received.split("\r\n\r\n");
    return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1]), headers, body };
  }

  it.each([
    ["one header of 16 KiB", `X-Padding: ${"a".repeat(16 * 1024)}\r\n`],
    ["an Authorization header of 16 KiB", `Authorization: Bearer dk_${"a".repeat(16 * 1024)}\r\n`],
    [
      "many headers adding up to 16 KiB",
      Array.from({ length: 512 }, (_, i) => `X-H${i}: ${"b".repeat(32)}\r\n`).join(""),
    ],
  ])("%s is 431 with an error body", async (_label, extra) => {
    const response = await rawRequest(
      `GET /open/v1/contacts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n${extra}Connection: close\r\n\r\n`,
    );
    expect(response.status).toBe(431);
    expect(response.headers.toLowerCase()).toContain("content-type: application/json");
    expect(response.headers).toMatch(/Request-Id: req_[0-9A-Za-z]+/i);
    const body = JSON.parse(response.body);
    expect(body.error).toMatchObject({ type: "invalid_request_error", code: "header_too_large" });
    expect(body.error.request_id).toMatch(/^req_/);
  });

  it("an Idempotency-Key of 8 KiB is 400 parameter_invalid", async () => {
    const response = await api.post("/open/v1/contacts", {
      key,
      body: { name: "Keyed" },
      headers: { "Idempotency-Key": "k".repeat(8 * 1024) },
    });
    expectRefused(response, 400, "parameter_invalid", "Idempotency-Key");
  });

  it("a request line that is not HTTP is 400 with an error body", async () => {
    const response = await rawRequest("GARBAGE\r\n\r\n");
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body).error.code).toBe("invalid_http_request");
  });
});
