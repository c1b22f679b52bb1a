import { beforeAll, describe, expect, inject, it } from "vitest";
import { API_KEY_PATTERN } from "../src/workspaces/api-keys.js";
import { ALL_SCOPES, admin, api, newKey, newWorkspace } from "./helpers/api.js";
import { expectInsufficientScope } from "./helpers/expect.js";

let workspaceId: string;
let key: string;
let contactId: string;
beforeAll(async () => {
  ({ workspaceId, key } = await newWorkspace());
  contactId = (await api.post("/open/v1/contacts", { key, body: { name: "Auth" } })).body.id;
});

const contactOperations = () =>
  [
    { scope: "contacts:read", allowed: 200, call: (k?: string) => api.get("/open/v1/contacts", { key: k }) },
    {
      scope: "contacts:read",
      allowed: 200,
      call: (k?: string) => api.get(`/open/v1/contacts/${contactId}`, { key: k }),
    },
    {
      scope: "contacts:write",
      allowed: 201,
      call: (k?: string) => api.post("/open/v1/contacts", { key: k, body: { name: "X" } }),
    },
    {
      scope: "contacts:write",
      allowed: 200,
      call: (k?: string) => api.patch(`/open/v1/contacts/${contactId}`, { key: k, body: { name: "Y" } }),
    },
    {
      scope: "contacts:write",
      // Past the scope check, an unknown contact is the next thing to fail.
      allowed: 404,
      call: (k?: string) => api.delete(`/open/v1/contacts/con_missing`, { key: k }),
    },
  ] as const;

describe("authentication", () => {
  it("no Authorization header is 401 missing_api_key with WWW-Authenticate", async () => {
    for (const { call } of contactOperations()) {
      const response = await call();
      expect(response.status).toBe(401);
      expect(response.body.error).toMatchObject({ type: "authentication_error", code: "missing_api_key" });
      expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
    }
  });

  // Built from the live key inside each test: `it.each` runs before beforeAll has made it.
  it.each<[string, (liveKey: string) => string]>([
    ["Basic credentials", () => "Basic dXNlcjpwYXNz"],
    ["the scheme alone", () => "Bearer"],
    ["the scheme and blanks", () => "Bearer  "],
    ["a valid key without the Bearer scheme", (liveKey) => liveKey],
    ["a valid key under another scheme", (liveKey) => `Token ${liveKey}`],
    ["a valid key with a second token", (liveKey) => `Bearer ${liveKey} extra`],
  ])("a malformed Authorization header (%s) is 401 missing_api_key", async (_label, header) => {
    expect(key).toMatch(API_KEY_PATTERN);
    const response = await api.get("/open/v1/contacts", { headers: { Authorization: header(key) } });
    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe("missing_api_key");
  });

  it("an unknown key is 401 invalid_api_key", async () => {
    const response = await api.get("/open/v1/contacts", { key: "dk_thisKeyDoesNotExist" });
    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe("invalid_api_key");
  });

  it("the scheme is case-insensitive", async () => {
    const response = await api.get("/open/v1/contacts", { headers: { Authorization: `bearer ${key}` } });
    expect(response.status).toBe(200);
  });
});

describe("scopes", () => {
  it("each contact operation needs its scope: 403 insufficient_scope naming it", async () => {
    for (const { scope, allowed, call } of contactOperations()) {
      const lacking = await newKey(
        workspaceId,
        ALL_SCOPES.filter((s) => s !== scope),
      );
      expectInsufficientScope(await call(lacking), scope);

      const only = await newKey(workspaceId, [scope]);
      expect((await call(only)).status, scope).toBe(allowed);
    }
  });

  it("a write scope alone does not grant reads", async () => {
    const writeOnly = await newKey(workspaceId, ["contacts:write"]);
    expect((await api.get("/open/v1/contacts", { key: writeOnly, query: { email: "a@b.c" } })).status).toBe(
      403,
    );
  });
});

describe("admin API: API keys issued, revoked and introspected", () => {
  it("issues keys once, lists them without the secret, and revocation stops a key at once", async () => {
    const created = await admin("POST", `/admin/v1/workspaces/${workspaceId}/api-keys`, {
      name: "to revoke",
      scopes: ["contacts:read"],
    });
    expect(created.status).toBe(201);
    expect(created.body.key).toMatch(/^dsk_[A-Za-z0-9]{49}$/);
    expect(created.body.key.slice(4, 12)).toBe(created.body.key_prefix);
    const plaintext = created.body.key;
    expect((await api.get("/open/v1/contacts", { key: plaintext })).status).toBe(200);

    const listed = await admin("GET", `/admin/v1/workspaces/${workspaceId}/api-keys`);
    expect(listed.status).toBe(200);
    const entry = listed.body.data.find((k: { id: string }) => k.id === created.body.id);
    expect(entry).toMatchObject({ name: "to revoke", scopes: ["contacts:read"], revoked_at: null });
    expect(JSON.stringify(listed.body)).not.toContain(plaintext);

    const revoked = await admin("DELETE", `/admin/v1/api-keys/${created.body.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.revoked_at).not.toBeNull();
    const after = await api.get("/open/v1/contacts", { key: plaintext });
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe("invalid_api_key");

    const again = await admin("DELETE", `/admin/v1/api-keys/${created.body.id}`);
    expect(again.status).toBe(200);
    expect(again.body.revoked_at).toBe(revoked.body.revoked_at);
  });

  it("introspection names the workspace of a plaintext key, revoked or not, and never echoes it", async () => {
    const created = await admin("POST", `/admin/v1/workspaces/${workspaceId}/api-keys`, {
      name: "introspected",
      scopes: ["contacts:read", "tickets:write"],
    });
    const found = await admin("POST", "/admin/v1/api-keys/introspect", { key: created.body.key });
    expect(found.status).toBe(200);
    const { key: _secret, ...record } = created.body;
    expect(found.body).toEqual(record);
    expect(JSON.stringify(found.body)).not.toContain(created.body.key);

    await admin("DELETE", `/admin/v1/api-keys/${created.body.id}`);
    const revoked = await admin("POST", "/admin/v1/api-keys/introspect", { key: created.body.key });
    expect(revoked.status).toBe(200);
    expect(revoked.body.revoked_at).not.toBeNull();

    const unknown = await admin("POST", "/admin/v1/api-keys/introspect", { key: `${created.body.key}x` });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: "resource_missing", param: "key" });
    expect(JSON.stringify(unknown.body)).not.toContain(created.body.key);
    const empty = await admin("POST", "/admin/v1/api-keys/introspect", { key: "" });
    expect(empty.status).toBe(400);
    const withKey = await api.post("/admin/v1/api-keys/introspect", { key, body: { key } });
    expect(withKey.status).toBe(401);
  });
});

describe("admin API: who may call it", () => {
  it("rejects unknown scopes, unknown workspaces and a wrong admin token", async () => {
    const badScope = await admin("POST", `/admin/v1/workspaces/${workspaceId}/api-keys`, {
      name: "x",
      scopes: ["contacts:admin"],
    });
    expect(badScope.status).toBe(400);
    expect(badScope.body.error.param).toBe("scopes[0]");
    const missing = await admin("POST", "/admin/v1/workspaces/ws_0000000000000000000000/api-keys", {
      name: "x",
      scopes: ["contacts:read"],
    });
    expect(missing.status).toBe(404);
    expect((await admin("DELETE", "/admin/v1/api-keys/key_0000000000000000000000")).status).toBe(404);
    const wrong = await api.post("/admin/v1/workspaces", {
      body: { name: "x" },
      headers: { Authorization: "Bearer not-the-token" },
    });
    expect(wrong.status).toBe(401);
    const none = await api.post("/admin/v1/workspaces", { body: { name: "x" } });
    expect(none.status).toBe(401);
    // Compared as SHA-256 digests (same length whatever is sent): longer, shorter and
    // one-character-off tokens are refused like any other.
    const token = inject("adminToken");
    for (const near of [
      `${token}x`,
      token.slice(0, -1),
      `${token.slice(0, -1)}${token.endsWith("a") ? "b" : "a"}`,
      "x".repeat(4096),
    ]) {
      const refused = await api.post("/admin/v1/workspaces", {
        body: { name: "x" },
        headers: { Authorization: `Bearer ${near}` },
      });
      expect(refused.status, near.slice(0, 40)).toBe(401);
      expect(refused.body.error).toMatchObject({ code: "invalid_api_key" });
    }
  });

  it("an API key cannot call the admin API", async () => {
    const response = await api.post("/admin/v1/workspaces", { key, body: { name: "x" } });
    expect(response.status).toBe(401);
  });
});
