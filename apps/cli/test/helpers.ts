// Runs `deskline` command lines against the run's real server, with a config directory of their
// own so no user settings leak in: most in this process (the CLI's `run`, on an output and an
// environment of their own), and as the built binary in a child process, as a user's shell runs
// it, where only a process shows what is tested: its exit status, standard input, a signal, a
// pipe that closes (docs/development.md, "The CLI's tests").
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { inject } from "vitest";
import { run } from "../src/index.js";

export const BIN = fileURLToPath(new URL("../dist/bin.js", import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  key?: string;
  /** Text piped to stdin. */
  input?: string;
  env?: Record<string, string | undefined>;
  /** Runs the built binary in a child process (always so with `input`, or a `-` argument: stdin). */
  process?: boolean;
}

/** A scratch directory for one test file (input files, errors files, config). */
export function scratch(): string {
  return mkdtempSync(join(tmpdir(), "deskline-cli-"));
}

export function writeScratch(dir: string, name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** The environment the CLI sees: the run's server, the key if given, an empty config dir. */
export function cliEnv(options: CliOptions = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    XDG_CONFIG_HOME: options.env?.XDG_CONFIG_HOME ?? scratch(),
    DESKLINE_BASE_URL: inject("baseUrl"),
  };
  // A run on a moved clock (`pnpm test:later`) moves the CLI's too: a user's CLI and server read
  // one date, and on the machine's the CLI's `--since 1h` fell 60 days before the server's now.
  if (process.env.DESKLINE_TEST_DATE_OFFSET_MS) {
    env.NODE_OPTIONS = process.env.NODE_OPTIONS;
    env.DESKLINE_TEST_DATE_OFFSET_MS = process.env.DESKLINE_TEST_DATE_OFFSET_MS;
  }
  if (options.key) env.DESKLINE_API_KEY = options.key;
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

/** Starts `deskline <args>`; the caller may kill it (see the interrupted import test). */
export function spawnCli(args: string[], options: CliOptions = {}) {
  const child = spawn(process.execPath, [BIN, ...args], { env: cliEnv(options), stdio: "pipe" });
  const result = new Promise<CliResult>((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
  child.stdin.end(options.input ?? "");
  return { child, result };
}

/**
 * Runs `deskline <args>` to its end: in this process unless `options` ask for a child (`process`)
 * or it reads stdin (`input`, a `-` argument: the CLI reads file descriptor 0 for those). In this
 * process it is the same program and exit-code mapping as the binary's (`run`), with the
 * environment a child would get, without a Node start (about 0.3 s of CPU) per command line.
 */
export async function cli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  if (options.process || options.input !== undefined || args.includes("-"))
    return spawnCli(args, options).result;
  const stdout = collected();
  const stderr = collected();
  const code = await run(args, { stdout: stdout.stream, stderr: stderr.stream, env: cliEnv(options) });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** A stream keeping what is written to it, as a pipe to a parent would. */
function collected(): { stream: Writable; text: () => string } {
  let text = "";
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}

/** stdout as JSON Lines. */
/** `--set field=value` for each assignment, as a create or update command takes them. */
export const setting = (...assignments: string[]): string[] => assignments.flatMap((a) => ["--set", a]);

export const jsonLines = (stdout: string): any[] =>
  stdout
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line));
