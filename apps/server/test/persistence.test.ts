import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_DATA_DIR, loadConfig } from "../src/config.js";
import { DEMO_FILE } from "../src/demo.js";
import { DataDirInUse, lockDataDir } from "../src/platform/database/data-dir.js";
import { type ApiResponse, request } from "./helpers/api.js";
import { MAIN_ENTRY, type MainProcess, startMain } from "./helpers/main-process.js";

/**
 * `pnpm start` keeps its data (docs/decisions.md, "Embedded database"). Real server processes (`src/main.ts --demo`, as
 * `pnpm start` runs it) on their own embedded database, in a temporary DESKLINE_DATA_DIR, stopped
 * and started again; and `--ephemeral`, which keeps nothing. MONGODB_URI is cleared for them:
 * with it there is no embedded database to keep.
 */

const PERSISTENT = [...MAIN_ENTRY, "--demo"];
const EPHEMERAL = [...PERSISTENT, "--ephemeral"];

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "deskline-data-"));
  dirs.push(dir);
  return dir;
}

interface Started {
  main: MainProcess;
  baseUrl: string;
  workspaceId: string;
  key: string;
  banner: string;
}

/** Starts `pnpm start`'s process and reads its banner. */
async function start(args: string[], dataDir: string, env: Record<string, string> = {}): Promise<Started> {
  const main = startMain({ MONGODB_URI: "", DESKLINE_DATA_DIR: dataDir, ...env }, args);
  const baseUrl = await main.ready();
  await main.logged(/Try: curl/);
  const banner = main.output().slice(main.output().indexOf("Deskline is running."));
  const workspaceId = /Workspace: +(ws_\S+)/.exec(banner)?.[1] as string;
  const key = /API key: +(dsk_\S+)/.exec(banner)?.[1] as string;
  expect(workspaceId, banner).toBeTruthy();
  expect(key, banner).toBeTruthy();
  return { main, baseUrl, workspaceId, key, banner };
}

async function stop({ main }: Started): Promise<void> {
  main.child.kill("SIGTERM");
  expect(await main.exited).toBe(0);
}

/** The one log line saying which embedded database started. */
function databaseLine(main: MainProcess): string {
  return JSON.parse(
    main
      .output()
      .split("\n")
      .find((line) => line.includes("embedded database:")) ?? "{}",
  ).msg;
}

/** The first start on an empty data directory: a persistent database and a demo key kept in a 0600 file. */
async function firstStart(dataDir: string): Promise<Started> {
  const first = await start(PERSISTENT, dataDir);
  expect(databaseLine(first.main)).toMatch(
    new RegExp(
      `^embedded database: .* \\(persistent in ${dataDir}/(mongod|mongo-java-server/data\\.mv\\.db)\\), because `,
    ),
  );
  expect(first.banner).toContain(`Data:       ${dataDir} (kept across restarts`);
  expect(first.banner).toMatch(/Workspace: +ws_\S+ \(demo\)\n/);
  const keyFile = join(dataDir, DEMO_FILE);
  expect(first.banner).toContain(`kept in ${keyFile}, 0600`);
  // The console link lasts 10 minutes; the banner says how to get another, with no admin token.
  expect(first.banner).toContain(
    `another: pnpm -s deskline --base-url ${first.baseUrl} --api-key ${first.key} console`,
  );
  expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
  expect(JSON.parse(await readFile(keyFile, "utf8"))).toEqual({
    workspace_id: first.workspaceId,
    key: first.key,
  });
  return first;
}

/** A contact with a value of every kind the database must give back as it was written. */
async function createKeptContact({ baseUrl, key }: Started) {
  const created = await request("POST", "/open/v1/contacts", {
    baseUrl,
    key,
    // Strings, numbers, booleans, null, an array, a nested object, dates: all must come back.
    body: {
      name: "Ada Lovelace",
      email: "ada@example.com",
      tags: ["kept", "pioneer"],
      custom_fields: { plan: "pro", seats: 5, ratio: 0.25, vip: true, note: null },
      address: { city: "London", country: "GB" },
      birthday: "1815-12-10",
    },
  });
  expect(created.status).toBe(201);
  return created;
}

/** A second server on the same data directory stops at once, saying why; the first serves on. */
async function expectSecondServerRefused(dataDir: string, first: Started, contactId: string): Promise<void> {
  const second = startMain({ MONGODB_URI: "", DESKLINE_DATA_DIR: dataDir }, PERSISTENT);
  expect(await second.exited).toBe(1);
  expect(second.output()).toContain(`the data directory ${dataDir} is in use by another Deskline server`);
  const stillThere = await request("GET", `/open/v1/contacts/${contactId}`, {
    baseUrl: first.baseUrl,
    key: first.key,
  });
  expect(stillThere.status).toBe(200);
}

/** The start after a clean stop: the same workspace and key, the contact as written, its indexes. */
async function expectRestartFinds(dataDir: string, first: Started, created: ApiResponse): Promise<Started> {
  const again = await start(PERSISTENT, dataDir);
  expect(again.workspaceId).toBe(first.workspaceId);
  expect(again.key).toBe(first.key);
  expect(again.banner).toMatch(/Workspace: +ws_\S+ \(demo, from the last start\)\n/);
  const found = await request("GET", `/open/v1/contacts/${created.body.id}`, {
    baseUrl: again.baseUrl,
    key: again.key,
  });
  expect(found.status).toBe(200);
  expect(found.body).toEqual(created.body);
  const list = await request("GET", "/open/v1/contacts", { baseUrl: again.baseUrl, key: again.key });
  expect(list.body.data.map((contact: { id: string }) => contact.id)).toEqual([created.body.id]);
  // Unique indexes came back too: the same email is still taken.
  const duplicate = await request("POST", "/open/v1/contacts", {
    baseUrl: again.baseUrl,
    key: again.key,
    body: { name: "Ada again", email: "ADA@example.com" },
  });
  expect(duplicate.status).toBe(409);
  return again;
}

/**
 * Killed outright: its lock stays behind, and the next start takes it over; the write made
 * just before the kill is kept (mongod journals; the fallback's launcher closes its file when
 * the killed server's pipe closes).
 */
async function expectKillKeepsLastWrite(dataDir: string, first: Started, again: Started, createdId: string) {
  const late = await request("POST", "/open/v1/contacts", {
    baseUrl: again.baseUrl,
    key: again.key,
    body: { name: "Written just before the kill" },
  });
  expect(late.status).toBe(201);
  again.main.child.kill("SIGKILL");
  await again.main.exited;
  expect(existsSync(join(dataDir, "deskline.lock"))).toBe(true);
  const revived = await start(PERSISTENT, dataDir);
  expect(revived.workspaceId).toBe(first.workspaceId);
  const afterKill = await request("GET", "/open/v1/contacts", {
    baseUrl: revived.baseUrl,
    key: revived.key,
  });
  expect(afterKill.body.data.map((contact: { id: string }) => contact.id)).toEqual([late.body.id, createdId]);
  await stop(revived);
}

// The tests share nothing (a data directory, processes and databases each) and mostly wait on
// processes: they run at once.
describe.concurrent("pnpm start's data", () => {
  it("a restart finds the contacts of the first start, in the same demo workspace with the same key", async ({
    expect,
  }) => {
    const dataDir = await tempDir();
    const first = await firstStart(dataDir);
    const created = await createKeptContact(first);
    await expectSecondServerRefused(dataDir, first, created.body.id);

    await stop(first);
    expect(existsSync(join(dataDir, "deskline.lock")), "the lock goes with the server").toBe(false);

    const again = await expectRestartFinds(dataDir, first, created);
    await expectKillKeepsLastWrite(dataDir, first, again, created.body.id);
  }, 240_000);

  it("a revoked demo key is replaced at the next start, in the same workspace", async ({ expect }) => {
    const dataDir = await tempDir();
    const admin = { Authorization: "Bearer persistence-admin" };
    const startWithAdmin = () => start(PERSISTENT, dataDir, { ADMIN_TOKEN: "persistence-admin" });
    const first = await startWithAdmin();
    const keys = await request("GET", `/admin/v1/workspaces/${first.workspaceId}/api-keys`, {
      baseUrl: first.baseUrl,
      headers: admin,
    });
    expect(keys.body.data).toHaveLength(1);
    const revoked = await request("DELETE", `/admin/v1/api-keys/${keys.body.data[0].id}`, {
      baseUrl: first.baseUrl,
      headers: admin,
    });
    expect(revoked.status).toBe(200);
    await stop(first);

    const again = await startWithAdmin();
    expect(again.workspaceId).toBe(first.workspaceId);
    expect(again.key).not.toBe(first.key);
    expect(again.banner).toContain("(demo, from the last start)");
    const list = await request("GET", "/open/v1/contacts", { baseUrl: again.baseUrl, key: again.key });
    expect(list.status).toBe(200);
    expect(JSON.parse(await readFile(join(dataDir, DEMO_FILE), "utf8")).key).toBe(again.key);
    await stop(again);
  }, 180_000);

  it("Ctrl-C while the banner is still being made stops gracefully: status 0, the server stopped", async ({
    expect,
  }) => {
    // As soon as it listens: its migrations and the demo workspace are still to come.
    const main = startMain(
      { MONGODB_URI: "", DESKLINE_DATA_DIR: join(await tempDir(), "unused") },
      EPHEMERAL,
    );
    await main.logged(/"msg":"listening"/);
    main.child.kill("SIGINT");
    expect(await main.exited, main.output()).toBe(0);
    expect(main.output()).toContain('"msg":"stopped"');
  }, 120_000);
});

// A sibling of the block above, run at once with it.
describe.concurrent("pnpm start --ephemeral", () => {
  it("--ephemeral keeps nothing and writes nothing into the data directory", async ({ expect }) => {
    const dataDir = join(await tempDir(), "unused");
    const first = await start(EPHEMERAL, dataDir);
    expect(databaseLine(first.main)).toMatch(/^embedded database: .* \(in memory\), because /);
    expect(first.banner).toContain("Data:       in memory (--ephemeral)");
    expect(first.banner).toContain("(all scopes; shown once)");
    const created = await request("POST", "/open/v1/contacts", {
      baseUrl: first.baseUrl,
      key: first.key,
      body: { name: "Gone tomorrow" },
    });
    expect(created.status).toBe(201);
    await stop(first);

    const again = await start(EPHEMERAL, dataDir);
    expect(again.workspaceId).not.toBe(first.workspaceId);
    const old = await request("GET", "/open/v1/contacts", { baseUrl: again.baseUrl, key: first.key });
    expect(old.status).toBe(401);
    const list = await request("GET", "/open/v1/contacts", { baseUrl: again.baseUrl, key: again.key });
    expect(list.body.data).toEqual([]);
    await stop(again);
    expect(existsSync(dataDir)).toBe(false);
  }, 180_000);
});

describe("pnpm start's data directory", () => {
  it("DESKLINE_DATA_DIR: the checkout's .deskline/data by default; relative to where the command was typed", () => {
    const root = resolve(import.meta.dirname, "../../..");
    expect(DEFAULT_DATA_DIR).toBe(join(root, ".deskline/data"));
    expect(loadConfig({}).dataDir).toBe(DEFAULT_DATA_DIR);
    expect(loadConfig({ DESKLINE_DATA_DIR: "/srv/deskline" }).dataDir).toBe("/srv/deskline");
    // pnpm runs `pnpm start` inside apps/server; INIT_CWD is where the user typed it.
    expect(loadConfig({ DESKLINE_DATA_DIR: "my-data", INIT_CWD: "/home/me/deskline" }).dataDir).toBe(
      "/home/me/deskline/my-data",
    );
    expect(loadConfig({ DESKLINE_DATA_DIR: "my-data" }).dataDir).toBe(resolve("my-data"));
  });

  it("the data directory's lock: held by a live process it refuses, left by a dead one it takes over", async () => {
    const dir = await tempDir();
    const lockFile = join(dir, "deskline.lock");
    // The test runner's parent is alive and is not this process.
    await writeFile(lockFile, `${process.ppid}\n`);
    await expect(lockDataDir(dir)).rejects.toThrow(DataDirInUse);
    expect(await readFile(lockFile, "utf8")).toBe(`${process.ppid}\n`);

    // A pid no process has (above Linux's pid_max): a lock a SIGKILL left behind.
    await writeFile(lockFile, "99999999\n");
    const lock = await lockDataDir(dir);
    expect(await readFile(lockFile, "utf8")).toBe(`${process.pid}\n`);
    await lock.release();
    expect(existsSync(lockFile)).toBe(false);
  });
});
