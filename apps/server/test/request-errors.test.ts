import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { api, newWorkspace, request } from "./helpers/api.js";

let key: string;
beforeAll(async () => {
  ({ key } = await newWorkspace());
});

const expectError = (
  response: { status: number; body: any },
  status: number,
  code: string,
  param?: string,
): void => {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error.code).toBe(code);
  expect(response.body.error.request_id).toMatch(/^req_/);
  if (param !== undefined) expect(response.body.error.param).toBe(param);
};

describe("bodies", () => {
  it("broken JSON is 400 invalid_json", async () => {
    const response = await api.post("/open/v1/contacts", {
      key,
      rawBody: '{"name": "Ada",',
      headers: { "Content-Type": "application/json" },
    });
    expectError(response, 400, "invalid_json");
  });

  it.each([
    ["an array", "[]"],
    ["a string", '"Ada"'],
    ["null", "null"],
    ["a number", "42"],
  ])("a JSON body that is %s is 400", async (_label, rawBody) => {
    const response = await api.post("/open/v1/contacts", {
      key,
      rawBody,
      headers: { "Content-Type": "application/json" },
    });
    expectError(response, 400, "parameter_invalid");
  });

  it.each(["text/plain", "application/x-www-form-urlencoded", "application/xml"])(
    "Content-Type %s is 415",
    async (type) => {
      const response = await api.post("/open/v1/contacts", {
        key,
        rawBody: '{"name":"Ada"}',
        headers: { "Content-Type": type },
      });
      expectError(response, 415, "unsupported_media_type");
    },
  );

  it("a body without Content-Type is 415", async () => {
    const response = await api.post("/open/v1/contacts", {
      key,
      rawBody: new TextEncoder().encode('{"name":"A"}'),
    });
    expectError(response, 415, "unsupported_media_type");
  });

  it("a body over 1 MiB is 413 and creates nothing", async () => {
    const name = `big-${Date.now()}`;
    const rawBody = JSON.stringify({ name, notes: "x".repeat(1024 * 1024) });
    const response = await api.post("/open/v1/contacts", {
      key,
      rawBody,
      headers: { "Content-Type": "application/json" },
    });
    expectError(response, 413, "body_too_large");
    const list = await api.get("/open/v1/contacts", { key, query: { search: name } });
    expect(list.body.data).toHaveLength(0);
  });

  it("an empty body is read as {} and names the missing field", async () => {
    const response = await api.post("/open/v1/contacts", {
      key,
      headers: { "Content-Type": "application/json" },
    });
    expectError(response, 400, "parameter_missing", "name");
  });

  it("application/json with a charset parameter is accepted", async () => {
    const response = await api.post("/open/v1/contacts", {
      key,
      rawBody: '{"name":"Charset"}',
      headers: { "Content-Type": "application/json; charset=utf-8" },
    });
    expect(response.status).toBe(201);
  });
});

/** Contact bodies refused on create: what is wrong, the body, the error's code and param. */
const REFUSED_CONTACTS: [label: string, body: unknown, code: string, param: string][] = [
  ["missing name", {}, "parameter_missing", "name"],
  ["empty name", { name: "" }, "parameter_invalid", "name"],
  ["null name", { name: null }, "parameter_invalid", "name"],
  ["name too long", { name: "x".repeat(201) }, "parameter_invalid", "name"],
  ["name of the wrong type", { name: 42 }, "parameter_invalid", "name"],
  ["unknown field", { name: "A", nickname: "Al" }, "parameter_unknown", "nickname"],
  ["server-set field", { name: "A", id: "con_x" }, "parameter_unknown", "id"],
  ["invalid email", { name: "A", email: "not-an-email" }, "parameter_invalid", "email"],
  ["invalid website", { name: "A", website: "not a url" }, "parameter_invalid", "website"],
  ["invalid birthday", { name: "A", birthday: "1990-02-30" }, "parameter_invalid", "birthday"],
  ["birthday not a date", { name: "A", birthday: "10/12/1815" }, "parameter_invalid", "birthday"],
  ["unknown timezone", { name: "A", timezone: "Mars/Olympus" }, "parameter_invalid", "timezone"],
  [
    "invalid language",
    { name: "A", preferred_language: "english please" },
    "parameter_invalid",
    "preferred_language",
  ],
  ["tags not an array", { name: "A", tags: "vip" }, "parameter_invalid", "tags"],
  ["tag not a string", { name: "A", tags: ["ok", 3] }, "parameter_invalid", "tags[1]"],
  ["empty tag", { name: "A", tags: [""] }, "parameter_invalid", "tags[0]"],
  ["do_not_contact not boolean", { name: "A", do_not_contact: "yes" }, "parameter_invalid", "do_not_contact"],
  ["address unknown key", { name: "A", address: { street: "x" } }, "parameter_unknown", "address.street"],
  ["address value type", { name: "A", address: { city: 7 } }, "parameter_invalid", "address.city"],
  [
    "custom field nested object",
    { name: "A", custom_fields: { a: { b: 1 } } },
    "parameter_invalid",
    "custom_fields.a",
  ],
  ["external id empty", { name: "A", external_ids: { crm: "" } }, "parameter_invalid", "external_ids.crm"],
  [
    "dotted custom field key",
    { name: "A", custom_fields: { "a.b": 1 } },
    "parameter_invalid",
    "custom_fields.a.b",
  ],
  [
    "operator custom field key",
    { name: "A", custom_fields: { $where: "1" } },
    "parameter_invalid",
    "custom_fields.$where",
  ],
  [
    "__proto__ custom field key",
    { name: "A", custom_fields: JSON.parse('{"__proto__":"x"}') },
    "parameter_invalid",
    "custom_fields.__proto__",
  ],
  [
    "dotted external id system",
    { name: "A", external_ids: { "sys.tem": "x" } },
    "parameter_invalid",
    "external_ids.sys.tem",
  ],
  ["operator in a filter value", { name: "A", email: { $ne: null } }, "parameter_invalid", "email"],
  ["external id number", { name: "A", external_ids: { crm: 5 } }, "parameter_invalid", "external_ids.crm"],
  ["name of spaces", { name: "   " }, "parameter_invalid", "name"],
  ["name of tabs, newlines and no-break spaces", { name: "\t\n\u00a0\u3000" }, "parameter_invalid", "name"],
  [
    "time zone spelled in lower case",
    { name: "A", timezone: "europe/paris" },
    "parameter_invalid",
    "timezone",
  ],
  ["time zone without an area", { name: "A", timezone: "CET" }, "parameter_invalid", "timezone"],
  ["empty time zone", { name: "A", timezone: "" }, "parameter_invalid", "timezone"],
  ["empty language", { name: "A", preferred_language: "" }, "parameter_invalid", "preferred_language"],
  [
    "language with an underscore",
    { name: "A", preferred_language: "en_US" },
    "parameter_invalid",
    "preferred_language",
  ],
  [
    "custom field beyond 2^53",
    { name: "A", custom_fields: { n: 2 ** 53 } },
    "parameter_invalid",
    "custom_fields.n",
  ],
];

describe("contact fields", () => {
  it.each(REFUSED_CONTACTS)("%s is rejected", async (_label, body, code, param) => {
    expectError(await api.post("/open/v1/contacts", { key, body }), 400, code, param);
  });

  it("a custom field's value names the bound its own type broke, or every type it may be", async () => {
    const long = await api.post("/open/v1/contacts", {
      key,
      body: { name: "A", custom_fields: { s: "x".repeat(1001) } },
    });
    expect(long.body.error.message).toBe("`custom_fields.s` must NOT have more than 1000 characters.");
    const nested = await api.post("/open/v1/contacts", {
      key,
      body: { name: "A", custom_fields: { o: {} } },
    });
    expect(nested.body.error).toMatchObject({ code: "parameter_invalid", param: "custom_fields.o" });
    expect(nested.body.error.message).toBe(
      "`custom_fields.o` must be of type string, number, boolean or null.",
    );
  });

  it("blank text is refused as blank, in words, on create and on PATCH", async () => {
    const created = await api.post("/open/v1/contacts", { key, body: { name: " \t " } });
    expect(created.body.error.message).toBe("`name` must not be empty or only whitespace.");
    const { body: contact } = await api.post("/open/v1/contacts", { key, body: { name: "Not blank" } });
    const patched = await api.patch(`/open/v1/contacts/${contact.id}`, { key, body: { name: "  " } });
    expectError(patched, 400, "parameter_invalid", "name");
    // Text around the whitespace is text: kept as sent.
    const padded = await api.post("/open/v1/contacts", { key, body: { name: " Ada " } });
    expect(padded.body.name).toBe(" Ada ");
  });

  // The spec's TimeZone enum (tzdata names, aliases included) and LanguageTag pattern (RFC 5646
  // syntax) are the whole rule: what they allow is stored as sent.
  it.each([
    ["Asia/Kolkata", "zh-Hant-TW"],
    ["Asia/Calcutta", "es-419"],
    ["UTC", "de-CH-1996"],
    ["America/Argentina/Buenos_Aires", "yue"],
    ["Etc/GMT+5", "EN-us"],
    ["US/Eastern", "en-US-u-ca-gregory"],
    ["America/North_Dakota/New_Salem", "x-private"],
  ])("time zone %s and language %s are accepted as sent", async (timezone, language) => {
    const response = await api.post("/open/v1/contacts", {
      key,
      body: { name: "Zones", timezone, preferred_language: language },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body).toMatchObject({ timezone, preferred_language: language });
  });

  // The spec marks these bodies required: `{}` is a PATCH that changes nothing, no body at all is
  // a client that forgot it. An optional body (rotating a secret) may still be left out.
  it.each([
    ["PATCH", "/open/v1/tickets/tkt_0VbzhaOU7JUKTXCSQpGXeF"],
    ["PATCH", "/open/v1/contacts/con_0VbzhaOU7JUKTXCSQpGXeF"],
    ["PATCH", "/open/v1/webhook-endpoints/we_0VbzhaOU7JUKTXCSQpGXeF"],
    ["POST", "/open/v1/conversations/conv_0VbzhaOU7JUKTXCSQpGXeF/messages"],
  ])("%s %s without a body is 400 parameter_missing", async (method, path) => {
    const response = await request(method, path, { key });
    expectError(response, 400, "parameter_missing");
    // Only whitespace is no body either.
    const headers = { "Content-Type": "application/json" };
    expectError(await request(method, path, { key, rawBody: " \n", headers }), 400, "parameter_missing");
  });

  it("PATCH validates the same way and rejects a null name", async () => {
    const { body: contact } = await api.post("/open/v1/contacts", { key, body: { name: "Patch me" } });
    const path = `/open/v1/contacts/${contact.id}`;
    expectError(await api.patch(path, { key, body: { name: null } }), 400, "parameter_invalid", "name");
    expectError(await api.patch(path, { key, body: { email: "nope" } }), 400, "parameter_invalid", "email");
    expectError(await api.patch(path, { key, body: { color: "red" } }), 400, "parameter_unknown", "color");
    // Nothing was half-written.
    expect((await api.get(path, { key })).body).toEqual(contact);
  });
});

/** A request fetch would refuse to send (TRACE), with the raw answer. */
function rawRequest(method: string, path: string, apiKey: string) {
  return new Promise<{ status: number; headers: IncomingHttpHeaders; body: string }>((done, fail) => {
    const call = httpRequest(new URL(path, inject("baseUrl")), {
      method,
      headers: { Authorization: `Bearer ${apiKey}` },
    });
    call.once("error", fail);
    call.once("response", (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        body += chunk;
      });
      response.once("end", () => done({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    call.end();
  });
}

describe("routes", () => {
  it("an unknown path is 404 route_not_found", async () => {
    expectError(await api.get("/open/v1/nothing-here", { key }), 404, "route_not_found");
  });

  it("a known path with another method is 405", async () => {
    expectError(await api.patch("/open/v1/contacts", { key, body: {} }), 405, "method_not_allowed");
  });

  // RFC 9110 §15.5.6: a 405 carries `Allow`, on every path, whether or not the method is one the
  // router knows (TRACE and QUERY are not); fetch refuses to send TRACE, hence node:http.
  it.each([
    ["PUT", "/open/v1/contacts", "GET, POST"],
    ["PUT", "/open/v1/contacts/con_0VbzhaOU7JUKTXCSQpGXeF", "GET, PATCH, DELETE"],
    ["DELETE", "/open/v1/tickets", "GET, POST"],
    ["TRACE", "/open/v1/webhook-endpoints/we_0VbzhaOU7JUKTXCSQpGXeF/rotate-secret", "POST"],
    ["POST", "/healthz", "GET"],
    ["TRACE", "/readyz", "GET"],
    ["QUERY", "/open/v1/docs", "GET"],
    ["DELETE", "/open/v1/openapi.json", "GET"],
    ["PATCH", "/open/v1/openapi.yaml", "GET"],
    // A literal segment is no `{id}`: the batch is not a contact called "batch".
    ["PATCH", "/open/v1/contacts/batch", "POST"],
    ["GET", "/open/v1/contacts/batch", "POST"],
  ])("%s %s is 405 with Allow: %s", async (method, path, allowed) => {
    const response = await rawRequest(method, path, key);
    expect(response.status, response.body).toBe(405);
    const allow = String(response.headers.allow).split(", ");
    // HEAD comes with every GET.
    expect(allow.sort()).toEqual(
      [...allowed.split(", "), ...(allowed.includes("GET") ? ["HEAD"] : [])].sort(),
    );
    expect(JSON.parse(response.body).error).toMatchObject({ code: "method_not_allowed" });
    expect(JSON.parse(response.body).error.message).toContain(String(response.headers.allow));
  });

  it("an unknown method on an unknown path is 404 route_not_found, without Allow", async () => {
    const response = await rawRequest("TRACE", "/open/v1/nothing-here", key);
    expect(response.status).toBe(404);
    expect(response.headers.allow).toBeUndefined();
    expect(JSON.parse(response.body).error.code).toBe("route_not_found");
  });

  it("the spec documents are public and agree with each other", async () => {
    const yaml = await api.get("/open/v1/openapi.yaml");
    expect(yaml.status).toBe(200);
    expect(yaml.headers.get("content-type")).toContain("yaml");
    const json = await api.get("/open/v1/openapi.json");
    expect(json.status).toBe(200);
    expect(json.body.openapi).toBe("3.1.0");
    const { parse } = await import("yaml");
    expect(parse(yaml.body)).toEqual(json.body);
  });

  it("the YAML document is text/yaml only for an Accept that prefers it, the same bytes", async () => {
    const plain = await api.get("/open/v1/openapi.yaml");
    expect(plain.headers.get("content-type")).toMatch(/^application\/yaml/);
    for (const accept of ["text/yaml", "text/yaml, application/yaml;q=0.5", "text/*"]) {
      const text = await api.get("/open/v1/openapi.yaml", { headers: { Accept: accept } });
      expect(text.headers.get("content-type"), accept).toMatch(/^text\/yaml/);
      expect(text.body).toBe(plain.body);
    }
    for (const accept of ["application/yaml", "*/*", "application/json", "application/yaml, text/yaml"]) {
      const yaml = await api.get("/open/v1/openapi.yaml", { headers: { Accept: accept } });
      expect(yaml.headers.get("content-type"), accept).toMatch(/^application\/yaml/);
    }
  });

  it("/healthz and /readyz answer without auth", async () => {
    expect((await api.get("/healthz")).body).toEqual({ status: "ok" });
    expect((await api.get("/readyz")).body).toEqual({ status: "ready" });
  });
});
