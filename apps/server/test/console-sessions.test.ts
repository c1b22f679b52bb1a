import { request as httpRequest } from "node:http";
import { MongoClient } from "mongodb";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import {
  admin,
  api,
  assertErrorShape,
  assertMatchesSpec,
  newKey,
  newWorkspace,
  request,
} from "./helpers/api.js";
import { type Browserless, exchange, mintSession, viaConsole } from "./helpers/console.js";
import { findOperation, type SpecOperation } from "./helpers/contract.js";
import { runDatabase } from "./helpers/database.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

// The webhook console's sessions and its gateway into the public API, over real HTTP: the
// admin API mints a one-time link, the link becomes an HttpOnly cookie, and the cookie acts as
// an API key of one workspace with the console's scopes, CSRF header required to change things.

const database = runDatabase();
let workspaceId: string;
let key: string;

beforeAll(async () => {
  ({ workspaceId, key } = await newWorkspace());
});

async function signedIn(): Promise<Browserless> {
  const { linkToken } = await mintSession(workspaceId);
  const exchanged = await exchange(linkToken);
  expect(exchanged.status).toBe(200);
  return exchanged.session;
}

describe("minting a console session (admin API): the link and its lengths", () => {
  it("answers a one-time link to /console/ on this server, and when it and the session end", async () => {
    const before = Date.now();
    const minted = await admin("POST", `/admin/v1/workspaces/${workspaceId}/console-sessions`, {});
    expect(minted.status).toBe(201);
    expect(minted.body.workspace_id).toBe(workspaceId);
    const url = new URL(minted.body.url);
    expect(url.origin).toBe(inject("baseUrl"));
    expect(url.pathname).toBe("/console/");
    expect(url.hash).toMatch(/^#token=cst_[A-Za-z0-9_-]{43}$/);
    const expires = Date.parse(minted.body.expires_at) - before;
    expect(expires).toBeGreaterThan(3_590_000);
    expect(expires).toBeLessThan(3_660_000);
    expect(Date.parse(minted.body.link_expires_at) - before).toBeLessThanOrEqual(10 * 60_000 + 5_000);
  });

  it("starts the link with CONSOLE_PUBLIC_URL when set, not with the address the request came by; refuses a URL that is no address", async () => {
    const server = await startTestServer({
      mongodbUri: inject("mongodbUri"),
      databaseName: inject("databaseName"),
      config: {
        consolePublicUrl: loadConfig({ CONSOLE_PUBLIC_URL: "https://deskline.invalid/support/" })
          .consolePublicUrl,
      },
    });
    try {
      const minted = await admin(
        "POST",
        `/admin/v1/workspaces/${workspaceId}/console-sessions`,
        {},
        server.baseUrl,
      );
      expect(minted.status).toBe(201);
      expect(minted.body.url).toMatch(
        /^https:\/\/deskline\.invalid\/support\/console\/#token=cst_[A-Za-z0-9_-]{43}$/,
      );
    } finally {
      await server.stop();
    }
    for (const bad of [
      "support.example.com",
      "ftp://deskline.invalid",
      "https://deskline.invalid/?a=1",
      "https://u:p@deskline.invalid",
    ]) {
      expect(() => loadConfig({ CONSOLE_PUBLIC_URL: bad }), bad).toThrow(ConfigError);
    }
  });

  it("takes a shorter session, refuses a length out of range and an unknown workspace", async () => {
    const short = await admin("POST", `/admin/v1/workspaces/${workspaceId}/console-sessions`, {
      expires_in: 120,
    });
    expect(Date.parse(short.body.expires_at) - Date.now()).toBeLessThan(125_000);
    const tooLong = await admin("POST", `/admin/v1/workspaces/${workspaceId}/console-sessions`, {
      expires_in: 10 ** 6,
    });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error).toMatchObject({ code: "parameter_invalid", param: "expires_in" });
    const missing = await admin(
      "POST",
      "/admin/v1/workspaces/ws_0000000000000000000000/console-sessions",
      {},
    );
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: "resource_missing", param: "id" });
  });
});

describe("minting a console session (admin API): no link token kept", () => {
  it("keeps no link token anywhere: a repeat with the same Idempotency-Key is refused, not replayed", async () => {
    // A database of its own, so every collection read below is this test's alone.
    const server = await startTestServer({
      mongodbUri: inject("mongodbUri"),
      databaseName: `deskline_test_links_${process.pid}`,
      dropDatabase: true,
    });
    try {
      const mint = () =>
        request("POST", `/admin/v1/workspaces/${ws}/console-sessions`, {
          baseUrl: server.baseUrl,
          body: { expires_in: 600 },
          headers: { Authorization: `Bearer ${inject("adminToken")}`, "Idempotency-Key": "mint-once" },
        });
      const ws = (await admin("POST", "/admin/v1/workspaces", { name: "links" }, server.baseUrl)).body.id;
      const first = await mint();
      expect(first.status).toBe(201);
      expect(first.body.url).toContain("#token=cst_");
      const again = await mint();
      expect(again.status).toBe(409);
      expect(again.body.error).toMatchObject({
        code: "idempotency_replay_unavailable",
        param: "Idempotency-Key",
      });
      expect(JSON.stringify(again.body)).not.toContain("cst_");
      const db = (await new MongoClient(inject("mongodbUri")).connect()).db(server.databaseName);
      try {
        const collections = await db.listCollections({}, { nameOnly: true }).toArray();
        expect(collections.map((c) => c.name)).toEqual(
          expect.arrayContaining(["idempotency_keys", "console_sessions"]),
        );
        for (const { name } of collections) {
          const text = JSON.stringify(await db.collection(name).find().toArray());
          expect(text, name).not.toContain("cst_");
        }
      } finally {
        await db.client.close();
      }
    } finally {
      await server.stop();
    }
  });
});

describe("minting a console session (admin API): hosts and the admin token", () => {
  it("builds no link from a Host that is not this machine without CONSOLE_PUBLIC_URL", async () => {
    const mintAs = (host: string) =>
      new Promise<{ status: number; body: any }>((resolve, reject) => {
        const url = new URL(`/admin/v1/workspaces/${workspaceId}/console-sessions`, inject("baseUrl"));
        const req = httpRequest(
          url,
          {
            method: "POST",
            headers: {
              Host: host,
              Authorization: `Bearer ${inject("adminToken")}`,
              "Content-Type": "application/json",
            },
          },
          (res) => {
            let text = "";
            res.on("data", (chunk) => {
              text += chunk;
            });
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
          },
        );
        req.on("error", reject);
        req.end("{}");
      });
    for (const host of ["evil.invalid", "evil.invalid:3000", "127.0.0.1.evil.invalid", "10.0.0.1"]) {
      const refused = await mintAs(host);
      assertMatchesSpec(
        findOperation("POST", "/admin/v1/workspaces/x/console-sessions") as SpecOperation,
        refused.status,
        refused.body,
      );
      expect(refused.status, host).toBe(409);
      expect(refused.body.error.code).toBe("console_public_url_required");
      expect(JSON.stringify(refused.body)).not.toContain("cst_");
    }
    for (const host of ["localhost:4000", "127.0.0.1", "app.localhost", "[::1]:4000"]) {
      const minted = await mintAs(host);
      expect(minted.status, host).toBe(201);
      expect(new URL(minted.body.url).host).toBe(host);
    }
  });

  it("needs the admin token", async () => {
    const response = await request("POST", `/admin/v1/workspaces/${workspaceId}/console-sessions`, {
      body: {},
    });
    expect(response.status).toBe(401);
  });
});

describe("listing and revoking sessions (admin API)", () => {
  it("lists the workspace's live sessions without tokens, and ends one now", async () => {
    const { workspaceId: ws } = await newWorkspace();
    const unopened = await mintSession(ws);
    const opened = await mintSession(ws);
    const session = (await exchange(opened.linkToken)).session;
    const listed = await admin("GET", `/admin/v1/workspaces/${ws}/console-sessions`);
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).not.toMatch(/cst_|css_|csrf/);
    expect(listed.body.has_more).toBe(false);
    expect(listed.body.data).toHaveLength(2);
    const [newest, oldest] = listed.body.data;
    expect(newest.opened_at).not.toBeNull();
    expect(oldest.opened_at).toBeNull();
    expect(newest.expires_at).toBe(opened.expiresAt);

    const revoked = await admin("DELETE", `/admin/v1/console-sessions/${newest.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual(newest);
    const after = await viaConsole(session, "GET", "webhook-endpoints");
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe("invalid_api_key");
    const again = await admin("DELETE", `/admin/v1/console-sessions/${newest.id}`);
    expect(again.status).toBe(404);
    expect(again.body.error).toMatchObject({ code: "resource_missing", param: "id" });

    // A link not opened yet is voided.
    expect((await admin("DELETE", `/admin/v1/console-sessions/${oldest.id}`)).status).toBe(200);
    expect((await exchange(unopened.linkToken)).status).toBe(401);
    const empty = await admin("GET", `/admin/v1/workspaces/${ws}/console-sessions`);
    expect(empty.body.data).toEqual([]);
  });

  it("knows no session of another form, and no workspace that does not exist", async () => {
    expect((await admin("DELETE", "/admin/v1/console-sessions/cs_nothing")).status).toBe(404);
    const missing = await admin("GET", "/admin/v1/workspaces/ws_0000000000000000000000/console-sessions");
    expect(missing.status).toBe(404);
    const open = await request("GET", `/admin/v1/workspaces/${workspaceId}/console-sessions`);
    expect(open.status).toBe(401);
  });
});

describe("a link with an API key (createConsoleLink)", () => {
  it("mints a link to the key's own workspace with webhooks:manage, no admin token", async () => {
    const { workspaceId: ws } = await newWorkspace();
    const manager = await newKey(ws, ["webhooks:manage"]);
    const minted = await api.post("/open/v1/console-sessions", { key: manager, body: {} });
    expect(minted.status).toBe(201);
    expect(minted.body.workspace_id).toBe(ws);
    expect(new URL(minted.body.url).origin).toBe(inject("baseUrl"));
    const linkToken = new URL(minted.body.url).hash.replace("#token=", "");
    const opened = await exchange(linkToken);
    expect(opened.status).toBe(200);
    expect(opened.body.workspace_id).toBe(ws);
    expect(opened.body.expires_at).toBe(minted.body.expires_at);
    const short = await api.post("/open/v1/console-sessions", { key: manager, body: { expires_in: 300 } });
    expect(Date.parse(short.body.expires_at) - Date.now()).toBeLessThan(305_000);
  });

  it("refuses a key without webhooks:manage, naming the scope", async () => {
    const reader = await newKey(workspaceId, ["contacts:read", "contacts:write"]);
    const refused = await api.post("/open/v1/console-sessions", { key: reader });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("insufficient_scope");
    expect(refused.body.error.message).toContain("webhooks:manage");
  });
});

describe("exchanging the link", () => {
  it("sets an HttpOnly, SameSite=Strict cookie scoped to /console/, and works once", async () => {
    const { linkToken, expiresAt } = await mintSession(workspaceId);
    const first = await exchange(linkToken);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      object: "console_session",
      workspace_id: workspaceId,
      expires_at: expiresAt,
    });
    expect(first.session.setCookie).toMatch(/^deskline_console=css_[A-Za-z0-9_-]{43}; /);
    expect(first.session.setCookie).toContain("Path=/console/");
    expect(first.session.setCookie).toContain("HttpOnly");
    expect(first.session.setCookie).toContain("SameSite=Strict");
    expect(first.session.setCookie).toMatch(/Max-Age=3[56]\d\d/);

    const again = await exchange(linkToken);
    expect(again.status).toBe(401);
    expect(again.body.error.code).toBe("invalid_api_key");
    expect(again.session.setCookie).toBe("");
  });

  it("refuses a link past its ten minutes, and a token that is no link", async () => {
    const { linkToken } = await mintSession(workspaceId);
    const db = await database();
    const past = new Date(Date.now() - 1000);
    await db
      .collection("console_sessions")
      .updateMany({ workspace_id: workspaceId, exchanged_at: null }, { $set: { link_expires_at: past } });
    expect((await exchange(linkToken)).status).toBe(401);
    expect((await exchange("css_not-a-link")).status).toBe(401);
    const noToken = await fetch(new URL("/console/session", inject("baseUrl")), {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: "{}",
    });
    expect(noToken.status).toBe(400);
  });

  it("takes no more than a token: 1 KiB, one level deep, refused before it is parsed", async () => {
    const post = async (body: string) => {
      const response = await fetch(new URL("/console/session", inject("baseUrl")), {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body,
      });
      const answer = (await response.json()) as any;
      assertErrorShape(response.status, answer);
      return { status: response.status, code: answer.error.code };
    };
    const tooLarge = await post(JSON.stringify({ token: `cst_${"x".repeat(1024)}` }));
    expect(tooLarge).toEqual({ status: 413, code: "body_too_large" });
    expect(await post('{"token":["cst_x"]}')).toEqual({ status: 400, code: "body_too_deep" });
    // As deep as the global 1 MiB allowed: refused by its size before anything reads its depth.
    const deep = `{"token":${"[".repeat(524_000)}${"]".repeat(524_000)}}`;
    expect(await post(deep)).toEqual({ status: 413, code: "body_too_large" });
    expect(await post(`{"token":"cst_x"${"[".repeat(400)}`)).toEqual({ status: 400, code: "body_too_deep" });
  });

  it("takes the token as JSON only (a cross-site form cannot send it)", async () => {
    const { linkToken } = await mintSession(workspaceId);
    const form = await fetch(new URL("/console/session", inject("baseUrl")), {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: `token=${linkToken}`,
    });
    expect(form.status).toBe(415);
  });
});

describe("the session as an API key of its workspace: its scope", () => {
  it("reads and manages webhook endpoints through /console/api/v1, as the public API answers", async () => {
    const session = await signedIn();
    const created = await viaConsole(session, "POST", "webhook-endpoints", {
      body: { url: "https://console-test.invalid/hooks", description: "from the console" },
    });
    expect(created.status).toBe(201);
    expect(created.body.secret).toMatch(/^whsec_/);
    expect(created.headers.get("cache-control")).toBe("no-store");
    // The same endpoint through the API key: one contract, one workspace.
    const viaKey = await api.get(`/open/v1/webhook-endpoints/${created.body.id}`, { key });
    expect(viaKey.status).toBe(200);
    const listed = await viaConsole(session, "GET", "webhook-endpoints");
    expect(listed.body.data.map((endpoint: { id: string }) => endpoint.id)).toContain(created.body.id);
    const stats = await viaConsole(session, "GET", `webhook-endpoints/${created.body.id}/stats`);
    expect(stats.status).toBe(200);
    expect(stats.body.hourly).toHaveLength(24);
  });

  it("has the console's scope only, webhooks:manage: no contacts, tickets or conversations", async () => {
    const session = await signedIn();
    for (const path of ["contacts", "tickets", "conversations"]) {
      const read = await viaConsole(session, "GET", path);
      expect(read.status, path).toBe(403);
      expect(read.body.error.code).toBe("insufficient_scope");
    }
    const write = await viaConsole(session, "POST", "contacts", { body: { name: "Ada" } });
    expect(write.status).toBe(403);
    expect(write.body.error.code).toBe("insufficient_scope");
    for (const path of ["webhook-endpoints", "events", "event-types"]) {
      expect((await viaConsole(session, "GET", path)).status, path).toBe(200);
    }
  });

  it("cannot mint console links of its own (a session would outlive its end)", async () => {
    const session = await signedIn();
    const minted = await viaConsole(session, "POST", "console-sessions", { body: {} });
    expect(minted.status).toBe(403);
    expect(minted.body.error.code).toBe("insufficient_scope");
    expect(JSON.stringify(minted.body)).not.toContain("cst_");
  });

  it("gets no replay of an API key's answer: the same Idempotency-Key is 422, without the secret", async () => {
    const body = { url: "https://rotate.invalid/hooks" };
    const headers = { "Idempotency-Key": `made-by-a-key-${Date.now()}` };
    const created = await api.post("/open/v1/webhook-endpoints", { key, body });
    const rotated = await api.post(`/open/v1/webhook-endpoints/${created.body.id}/rotate-secret`, {
      key,
      headers,
    });
    expect(rotated.body.secret).toMatch(/^whsec_/);
    const session = await signedIn();
    const path = `webhook-endpoints/${created.body.id}/rotate-secret`;
    const replay = await viaConsole(session, "POST", path, { headers });
    expect(replay.status).toBe(422);
    expect(replay.body.error.code).toBe("idempotency_key_other_caller");
    expect(JSON.stringify(replay.body)).not.toContain("whsec_");
  });
});

describe("the session as an API key of its workspace: CSRF, expiry, isolation and sign-out", () => {
  it("refuses a state-changing request without the session's CSRF header", async () => {
    const session = await signedIn();
    const body = { url: "https://csrf.invalid/hooks" };
    for (const csrf of [null, "forged", `${session.csrf}x`]) {
      const forged = await viaConsole(session, "POST", "webhook-endpoints", { body, csrf });
      expect(forged.status).toBe(403);
      expect(forged.body.error).toMatchObject({ type: "permission_error", code: "csrf_token_invalid" });
    }
    const listed = await api.get("/open/v1/webhook-endpoints", { key, query: { limit: 100 } });
    expect(listed.body.data.map((endpoint: { url: string }) => endpoint.url)).not.toContain(body.url);
  });

  it("refuses requests without a session, with an unknown one, and after it expired", async () => {
    expect((await viaConsole({}, "GET", "webhook-endpoints")).body.error.code).toBe("missing_api_key");
    const unknown = await viaConsole({ cookie: "deskline_console=css_unknown" }, "GET", "webhook-endpoints");
    expect(unknown.status).toBe(401);
    const session = await signedIn();
    expect((await viaConsole(session, "GET", "webhook-endpoints")).status).toBe(200);
    const db = await database();
    await db
      .collection("console_sessions")
      .updateMany({ workspace_id: workspaceId }, { $set: { expires_at: new Date(Date.now() - 1000) } });
    const expired = await viaConsole(session, "GET", "webhook-endpoints");
    expect(expired.status).toBe(401);
    expect(expired.body.error.code).toBe("invalid_api_key");
  });

  it("sees another workspace's ids as missing, exactly as an API key does", async () => {
    const other = await newWorkspace();
    const theirs = await api.post("/open/v1/webhook-endpoints", {
      key: other.key,
      body: { url: "https://theirs.invalid/h" },
    });
    const session = await signedIn();
    for (const path of [
      `webhook-endpoints/${theirs.body.id}`,
      `webhook-endpoints/${theirs.body.id}/deliveries`,
      `webhook-endpoints/${theirs.body.id}/stats`,
    ]) {
      const answer = await viaConsole(session, "GET", path);
      expect(answer.status).toBe(404);
      expect(answer.body.error.code).toBe("resource_missing");
    }
    const pause = await viaConsole(session, "PATCH", `webhook-endpoints/${theirs.body.id}`, {
      body: { status: "disabled" },
    });
    expect(pause.status).toBe(404);
    const still = await api.get(`/open/v1/webhook-endpoints/${theirs.body.id}`, { key: other.key });
    expect(still.body.status).toBe("enabled");
  });

  it("ends with sign-out", async () => {
    const session = await signedIn();
    const out = await fetch(new URL("/console/session", inject("baseUrl")), {
      method: "DELETE",
      headers: { Cookie: session.cookie },
    });
    expect(out.status).toBe(200);
    expect(out.headers.get("set-cookie")).toContain("Max-Age=0");
    expect((await viaConsole(session, "GET", "webhook-endpoints")).status).toBe(401);
  });
});

describe("behind a proxy that mounts the server under a path (CONSOLE_PUBLIC_URL with a path)", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      mongodbUri: inject("mongodbUri"),
      databaseName: inject("databaseName"),
      config: {
        consolePublicUrl: loadConfig({ CONSOLE_PUBLIC_URL: "https://deskline.invalid/support/" })
          .consolePublicUrl,
      },
    });
  });
  afterAll(() => server.stop());

  it("scopes the cookie to the path browsers see, and the page names only addresses relative to its own", async () => {
    const minted = await mintSession(workspaceId, {}, server.baseUrl);
    expect(minted.url).toMatch(/^https:\/\/deskline\.invalid\/support\/console\/#token=/);
    const exchanged = await exchange(minted.linkToken, server.baseUrl);
    expect(exchanged.status).toBe(200);
    expect(exchanged.session.setCookie.split("; ")).toContain("Path=/support/console/");
    // The proxy strips `/support`: the page is what the server serves at /console/.
    const page = await (await fetch(new URL("/console/", server.baseUrl))).text();
    const addresses = [...page.matchAll(/(?:href|src)="([^"#]+)"/g)].map((match) => match[1]);
    expect(addresses.length).toBeGreaterThan(3);
    for (const address of addresses) expect(address, address).toMatch(/^assets\//);
    const bare = await fetch(new URL("/console", server.baseUrl), { redirect: "manual" });
    expect(bare.status).toBe(302);
    expect(bare.headers.get("location")).toBe("console/");
  });
});

describe("behind https (CONSOLE_PUBLIC_URL)", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      mongodbUri: inject("mongodbUri"),
      databaseName: inject("databaseName"),
      config: {
        consolePublicUrl: loadConfig({ CONSOLE_PUBLIC_URL: "https://deskline.invalid" }).consolePublicUrl,
      },
    });
  });
  afterAll(() => server.stop());

  it("makes the cookie Secure, with the __Secure- prefix, still scoped to /console/ and Strict", async () => {
    const { linkToken } = await mintSession(workspaceId, {}, server.baseUrl);
    const exchanged = await exchange(linkToken, server.baseUrl);
    expect(exchanged.status).toBe(200);
    const attributes = exchanged.session.setCookie.split("; ");
    expect(attributes[0]).toMatch(/^__Secure-deskline_console=css_[A-Za-z0-9_-]{43}$/);
    expect(attributes).toEqual(
      expect.arrayContaining(["Secure", "HttpOnly", "SameSite=Strict", "Path=/console/"]),
    );
    expect(attributes.some((attribute) => attribute.startsWith("Domain"))).toBe(false);
    const baseUrl = server.baseUrl;
    expect((await viaConsole(exchanged.session, "GET", "webhook-endpoints", { baseUrl })).status).toBe(200);
    // The unprefixed name is not read where the prefixed one is made.
    const token = attributes[0]?.split("=")[1];
    const plain = { cookie: `deskline_console=${token}` };
    expect((await viaConsole(plain, "GET", "webhook-endpoints", { baseUrl })).status).toBe(401);
    const out = await fetch(new URL("/console/session", baseUrl), {
      method: "DELETE",
      headers: { Cookie: exchanged.session.cookie },
    });
    expect(out.headers.get("set-cookie")).toMatch(/^__Secure-deskline_console=; Max-Age=0; .*Secure/);
  });

  it("keeps the plain cookie over plain http", async () => {
    const { linkToken } = await mintSession(workspaceId);
    const exchanged = await exchange(linkToken);
    expect(exchanged.session.setCookie).toMatch(/^deskline_console=/);
    expect(exchanged.session.setCookie.split("; ")).not.toContain("Secure");
  });
});

describe("the console's page", () => {
  it("is served with a strict Content-Security-Policy, no framing, and its files from this server", async () => {
    const page = await fetch(new URL("/console/", inject("baseUrl")));
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const csp = page.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    const html = await page.text();
    expect(html).not.toMatch(/<script>|<style|style=|\son\w+=/);
    // Relative to the page (so a proxy's path prefix stays), and so of this server.
    const pageUrl = new URL("/console/", inject("baseUrl"));
    for (const [, src] of html.matchAll(/(?:src|href)="([^"#]+)"/g)) {
      expect(src, "a file from elsewhere").toMatch(/^assets\//);
      expect((await fetch(new URL(src as string, pageUrl))).status).toBe(200);
    }
    const redirect = await fetch(new URL("/console", inject("baseUrl")), { redirect: "manual" });
    expect(
      new URL(redirect.headers.get("location") ?? "", new URL("/console", inject("baseUrl"))).pathname,
    ).toBe("/console/");
  });

  it("answers an unknown file as the API answers an unknown route", async () => {
    const missing = await request("GET", "/console/assets/nothing.js");
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("route_not_found");
  });
});

describe("settings", () => {
  it.each([
    [{}, 60 * 60_000, []],
    [{ CONSOLE_SESSION_TTL_MINUTES: "15" }, 15 * 60_000, []],
    [
      { CONSOLE_FRAME_ANCESTORS: "https://app.example.com, http://localhost:8080 https://b.example/" },
      60 * 60_000,
      ["https://app.example.com", "http://localhost:8080", "https://b.example"],
    ],
  ])("%j", (env, ttl, ancestors) => {
    const config = loadConfig(env);
    expect(config.consoleSessionTtlMs).toBe(ttl);
    expect(config.consoleFrameAncestors).toEqual(ancestors);
  });

  it.each([
    { CONSOLE_SESSION_TTL_MINUTES: "0" },
    { CONSOLE_FRAME_ANCESTORS: "https://app.example.com/console" },
    { CONSOLE_FRAME_ANCESTORS: "*" },
    { CONSOLE_FRAME_ANCESTORS: "ftp://files.example.com" },
  ])("refuses %j", (env) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
  });
});

describe("embedding, with CONSOLE_FRAME_ANCESTORS", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      mongodbUri: inject("mongodbUri"),
      databaseName: inject("databaseName"),
      config: { consoleFrameAncestors: ["https://app.example.com"] },
    });
  });
  afterAll(() => server.stop());

  it("lets those origins frame the page, and makes the cookie one a framed page gets", async () => {
    const page = await fetch(new URL("/console/", server.baseUrl));
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors https://app.example.com");
    expect(page.headers.get("x-frame-options")).toBeNull();
    const { linkToken } = await mintSession(workspaceId, {}, server.baseUrl);
    const exchanged = await exchange(linkToken, server.baseUrl);
    expect(exchanged.status).toBe(200);
    expect(exchanged.session.setCookie).toMatch(/^__Secure-deskline_console=css_/);
    expect(exchanged.session.setCookie).toContain("; Secure; SameSite=None; Partitioned");
    const listed = await viaConsole(exchanged.session, "GET", "webhook-endpoints", {
      baseUrl: server.baseUrl,
    });
    expect(listed.status).toBe(200);
  });
});
