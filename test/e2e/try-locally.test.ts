// The README's "Try webhooks locally", run as written against the run's development server
// (WEBHOOK_ALLOW_PRIVATE_NETWORKS=true, global-setup.ts): the built `deskline` registers an
// `http://127.0.0.1` endpoint, the README's receiver (on the built verifier) starts with its secret,
// `deskline trigger` causes an event, and the receiver prints the event it verified. The section's
// blocks carry skip markers, since the generic runner (readme-examples.test.ts) holds that no
// example delivers anywhere; this file runs them, with a free port for the README's 4000.
import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { eventually } from "@deskline/test-kit";
import { afterEach, expect, it } from "vitest";
import { readmeSections } from "../helpers/readme-examples.js";
import { CLI_BIN, newWorld, type World } from "../helpers/world.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const TITLE = "Try webhooks locally";

let world: World | undefined;
let stopSession: (() => void) | undefined;
let sessionDir: string | undefined;
afterEach(async () => {
  stopSession?.();
  if (sessionDir) rmSync(sessionDir, { recursive: true, force: true });
  await world?.close();
  world = undefined;
});

/** A port nothing listens on now, for the receiver. */
async function freePort(): Promise<number> {
  const probe = createServer().listen(0, "127.0.0.1");
  await new Promise((done) => probe.once("listening", done));
  const { port } = probe.address() as { port: number };
  await new Promise((done) => probe.close(done));
  return port;
}

/** The section's blocks as one script; the server's start and the port line are the test's. */
function recipe(): string {
  const section = readmeSections(readFileSync(join(ROOT, "README.md"), "utf8")).find(
    (s) => s.title === TITLE,
  );
  if (!section || section.skipped.length < 2)
    throw new Error(`README.md: no "${TITLE}" section with its blocks`);
  const lines = section.skipped
    .flatMap((block) => block.code.split("\n"))
    .filter((line) => !/^\S+=\S+ pnpm start\b|^HOOK_PORT=\d+$/.test(line.trim()));
  return ["set -euo pipefail", ...lines, ""].join("\n");
}

it("the README's recipe delivers a verified event to an http://127.0.0.1 receiver", async () => {
  world = await newWorld();
  // Under the repository, as a reader's checkout: the receiver's bare import resolves from its node_modules.
  mkdirSync(join(ROOT, ".tmp"), { recursive: true });
  const dir = mkdtempSync(join(ROOT, ".tmp", "try-locally-"));
  sessionDir = dir;
  const bin = join(world.scratch, "bin");
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, "deskline"), `#!/bin/sh\nexec "${process.execPath}" "${CLI_BIN}" "$@"\n`);
  chmodSync(join(bin, "deskline"), 0o755);
  const moved = process.env.DESKLINE_TEST_DATE_OFFSET_MS;
  const session = spawn("bash", ["-c", recipe()], {
    cwd: dir,
    // Its own process group, so that the receiver it leaves running stops with it.
    detached: true,
    env: {
      PATH: `${bin}:${process.env.PATH}`,
      HOME: world.scratch,
      XDG_CONFIG_HOME: join(world.scratch, "config"),
      XDG_STATE_HOME: join(world.scratch, "state"),
      B: world.baseUrl,
      KEY: world.key,
      HOOK_PORT: String(await freePort()),
      ...(moved ? { NODE_OPTIONS: process.env.NODE_OPTIONS ?? "", DESKLINE_TEST_DATE_OFFSET_MS: moved } : {}),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  stopSession = () => {
    if (session.pid) process.kill(-session.pid, "SIGTERM");
  };
  let output = "";
  session.stdout.on("data", (chunk: Buffer) => {
    output += chunk;
  });
  session.stderr.on("data", (chunk: Buffer) => {
    output += chunk;
  });
  const code = await new Promise<number | null>((done) => session.once("exit", done));
  expect(code, output).toBe(0);

  const [contact] = await world.sdk.contacts.list({ tag: ["trigger"] }).toArray();
  const printed = await eventually(
    async () => output,
    (text) => text.includes("verified contact.created"),
    "the receiver's line",
  );
  expect(printed).toContain(`verified contact.created ${contact?.id}`);
  const [endpoint] = await world.sdk.webhookEndpoints.list().toArray();
  expect(endpoint?.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/webhooks$/);
  const [delivery] = await world.sdk.webhookEndpoints.deliveries(endpoint?.id as string).toArray();
  expect(delivery).toMatchObject({ status: "succeeded", event_type: "contact.created" });
  expect(world.proxy.problems()).toEqual([]);
});
