// The server process prints readable lines to a person at a terminal and JSON lines to a pipe
// (LOG_FORMAT, docs/operations.md). A terminal is a real pseudo-terminal: util-linux `script`
// runs the server inside one and copies what it shows to us.
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, describe, type ExpectStatic, inject, it } from "vitest";
import { MAIN } from "./helpers/main-process.js";

const SERVER_DIR = join(import.meta.dirname, "..");
const started: ChildProcess[] = [];
afterAll(() => {
  for (const child of started) if (child.exitCode === null) child.kill("SIGKILL");
});

/** Runs the server until it logs that it listens (or exits), then stops it; its stdout. */
async function runServer(
  env: Record<string, string>,
  terminal: boolean,
): Promise<{ out: string; err: string; code: number | null }> {
  const command = [process.execPath, ...MAIN];
  const child = terminal
    ? // -e: script exits with the child's status; the command line is passed to a shell.
      spawn("script", ["-q", "-e", "-c", command.map((part) => `'${part}'`).join(" "), "/dev/null"], {
        cwd: SERVER_DIR,
        env: { ...process.env, ...env },
        stdio: ["ignore", "pipe", "pipe"],
      })
    : spawn(command[0] as string, command.slice(1), {
        cwd: SERVER_DIR,
        env: { ...process.env, ...env },
        stdio: ["ignore", "pipe", "pipe"],
      });
  started.push(child);
  let out = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    out += chunk.toString();
    if (/listening/.test(out)) child.kill("SIGTERM");
  });
  let err = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    err += chunk.toString();
  });
  const code = await new Promise<number | null>((done) => child.once("exit", (c) => done(c)));
  return { out, err, code };
}

const env = (extra: Record<string, string> = {}) => ({
  MONGODB_URI: inject("mongodbUri"),
  MONGODB_DATABASE: inject("databaseName"),
  PORT: "0",
  LOG_LEVEL: "info",
  LOG_FORMAT: "",
  ...extra,
});

/** The terminal's colour codes (ESC [ … m). */
const COLOUR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`);
const plain = (text: string) => text.replace(new RegExp(COLOUR.source, "g"), "").replace(/\r/g, "");
const lines = (text: string) =>
  plain(text)
    .split("\n")
    .filter((line) => line.trim() !== "");

function expectJson(expect: ExpectStatic, out: string) {
  expect(lines(out).some((line) => / INFO: /.test(line))).toBe(false);
  const listening = lines(out)
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { level: number; msg: string; baseUrl?: string })
    .find((entry) => entry.msg === "listening");
  expect(listening).toMatchObject({
    level: 30,
    baseUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
  });
}

function expectPretty(expect: ExpectStatic, out: string) {
  const listening = lines(out).find((line) => line.includes("listening"));
  // e.g. `[12:00:01.123] INFO: listening {"baseUrl":"http://127.0.0.1:40123","role":"all"}`
  expect(listening).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: listening .*127\.0\.0\.1:\d+/);
  expect(lines(out).some((line) => line.startsWith('{"level"'))).toBe(false);
}

// Each test waits on a server process of its own (its env passed to it, not set here): they run at once.
describe.concurrent("log format (LOG_FORMAT)", () => {
  it("is readable on a terminal by default", async ({ expect }) => {
    const { out } = await runServer(env(), true);
    expectPretty(expect, out);
    // Colours only on a terminal: a person's eye, not a file's.
    expect(out).toMatch(COLOUR);
  }, 60_000);

  it("is JSON lines when stdout is not a terminal", async ({ expect }) => {
    expectJson(expect, (await runServer(env(), false)).out);
  }, 60_000);

  it("LOG_FORMAT=json gives JSON on a terminal too", async ({ expect }) => {
    expectJson(expect, (await runServer(env({ LOG_FORMAT: "json" }), true)).out);
  }, 60_000);

  it("LOG_FORMAT=pretty gives readable lines in a pipe, without colours", async ({ expect }) => {
    const { out } = await runServer(env({ LOG_FORMAT: "pretty" }), false);
    expectPretty(expect, out);
    expect(out).not.toMatch(COLOUR);
  }, 60_000);

  it("refuses another LOG_FORMAT with a configuration error", async ({ expect }) => {
    const { err, code } = await runServer(env({ LOG_FORMAT: "xml" }), false);
    expect(code).toBe(1);
    expect(err).toContain("LOG_FORMAT must be one of auto, json, pretty");
  }, 60_000);
});
