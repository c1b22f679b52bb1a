import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import {
  API_KEY_PATTERN,
  type ApiKeyDoc,
  isWellFormedApiKey,
  newApiKeyText,
} from "../src/workspaces/api-keys.js";
import { api, newWorkspace } from "./helpers/api.js";
import { runDatabase } from "./helpers/database.js";
import { startTestServer } from "./helpers/server.js";
import { createTcpProxy } from "./helpers/tcp-proxy.js";

// API keys a secret scanner recognises: a fixed prefix and a CRC32 checksum. Every one-character
// change of an issued key is 401; a key that fails the checksum is refused without a database
// lookup (shown with the database cut: a well-formed unknown key then waits for it and gets 503,
// a mistyped one is 401 at once); keys issued before the checksum keep working.

vi.setConfig({ testTimeout: 60_000 });
const database = runDatabase();
let key: string;
let workspaceId: string;
beforeAll(async () => {
  ({ key, workspaceId } = await newWorkspace());
});

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/** `key` with the character at `i` replaced by another one of the same alphabet. */
function changedAt(text: string, i: number): string {
  const c = text[i] as string;
  const other = BASE62[(BASE62.indexOf(c) + 1 + (i % 61)) % 62] as string;
  return text.slice(0, i) + (other === c ? "_" : other) + text.slice(i + 1);
}

const expect401 = (response: { status: number; body: any }) => {
  expect(response.status).toBe(401);
  expect(response.body.error.code).toBe("invalid_api_key");
};

describe("the key format", () => {
  it("an issued key matches the one regular expression the README documents, and works", async () => {
    const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8");
    expect(readme).toContain(`\n${API_KEY_PATTERN.source}\n`);
    expect(key).toMatch(new RegExp(`^${API_KEY_PATTERN.source}$`));
    expect((await api.get("/open/v1/contacts", { key })).status).toBe(200);
  });

  it("every one-character change of an issued key is 401 invalid_api_key", async () => {
    for (let i = 0; i < key.length; i++) {
      const changed = changedAt(key, i);
      expect(changed).not.toBe(key);
      expect(isWellFormedApiKey(changed), changed).toBe(false);
      expect401(await api.get("/open/v1/contacts", { key: changed }));
    }
  });

  it("a truncated or extended key is 401 invalid_api_key", async () => {
    for (const wrong of [key.slice(0, -1), key.slice(0, 20), `${key}0`, key.slice(1)]) {
      expect401(await api.get("/open/v1/contacts", { key: wrong }));
    }
  });

  it("a key issued before the checksum (dk_ + 43 base64url characters) keeps working", async () => {
    const legacy = `dk_${randomBytes(32).toString("base64url")}`;
    const id = `key_legacy${randomBytes(6).toString("hex")}`;
    const now = new Date();
    // As the previous version stored it: the SHA-256 of the plaintext is the document's _id.
    await (await database()).collection<ApiKeyDoc>("api_keys").insertOne({
      _id: createHash("sha256").update(legacy).digest("hex"),
      id,
      workspace_id: workspaceId,
      name: "issued before the checksum",
      scopes: ["contacts:read"],
      key_prefix: legacy.slice(3, 11),
      created_at: now,
      last_used_at: null,
      revoked_at: null,
    });
    expect((await api.get("/open/v1/contacts", { key: legacy })).status).toBe(200);
    expect401(await api.get("/open/v1/contacts", { key: legacy.slice(0, -1) }));
  });
});

describe("a key that fails the checksum is refused without a database lookup", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  });

  it("with the database cut, a well-formed unknown key is 503 while a mistyped one is 401", async () => {
    const proxy = await createTcpProxy(inject("mongodbUri"));
    await proxy.open();
    cleanups.push(() => proxy.cut());
    const server = await startTestServer({ mongodbUri: proxy.uri, databaseName: inject("databaseName") });
    cleanups.push(() => server.stop());
    const baseUrl = server.baseUrl;
    expect((await api.get("/open/v1/contacts", { key, baseUrl })).status).toBe(200);
    await proxy.cut();

    const wellFormed = await api.get("/open/v1/contacts", { key: newApiKeyText(), baseUrl });
    expect(wellFormed.status).toBe(503);
    expect(wellFormed.body.error.code).toBe("database_unavailable");
    for (const wrong of [changedAt(key, 10), changedAt(key, key.length - 1), key.slice(0, -3), "dk_short"]) {
      expect401(await api.get("/open/v1/contacts", { key: wrong, baseUrl }));
    }
  });
});
