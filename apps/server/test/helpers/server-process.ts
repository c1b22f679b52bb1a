import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { AGAIN, type BackoffPolicy, giveUpAfter, retry } from "../../src/platform/backoff.js";

/**
 * The real server process (`src/main.ts`, or its build) as a child, without any test runner:
 * the tests (main-process.ts, which also kills what a file started) and the crash trials
 * (soak/) both start servers with it.
 */

export interface MainProcess {
  child: ChildProcess;
  /** Resolves with the base URL once the process logs that it listens. */
  baseUrl: Promise<string>;
  /**
   * Resolves with the base URL once `/readyz` answers 200: its database answered and its
   * migrations and indexes are done (before that, the API answers 503).
   */
  ready: () => Promise<string>;
  /** Everything it wrote so far, stdout and stderr. */
  output: () => string;
  /** Resolves with the exit code (null after a signal). */
  exited: Promise<number | null>;
  /** Resolves once the output matches `pattern` (e.g. a worker's "delivering webhooks"). */
  logged: (pattern: RegExp) => Promise<void>;
}

/**
 * How to run the server: from source through tsx, or the build (`dist/main.js`); `MAIN` picks.
 * `--ephemeral`: a server that starts its own embedded database keeps it in memory, never in the
 * checkout's .deskline/data (the persistence tests give theirs a temporary DESKLINE_DATA_DIR).
 */
export const FROM_SOURCE = ["--import", "tsx", "src/main.ts", "--ephemeral"];
const SOURCE_ENTRY = FROM_SOURCE.slice(0, -1);

export const BUILT = ["dist/main.js", "--ephemeral"];
const BUILT_ENTRY = BUILT.slice(0, -1);

/**
 * The server's entry as this run starts it (node's arguments before the server's own): its build where the build is newer than every source file
 * (`pnpm test` builds just before the tests), else from source. Through tsx a start costs about
 * 5 s of CPU against 4 from the build, and the tests start dozens; an edit not built yet is
 * still what runs.
 */
export const MAIN_ENTRY = buildIsFresh() ? BUILT_ENTRY : SOURCE_ENTRY;
/** `MAIN_ENTRY --ephemeral`: what most tests start. */
export const MAIN = [...MAIN_ENTRY, "--ephemeral"];

/** Node's arguments for the server with its wall clock moved (helpers/shifted-date.mjs; see `clockMovedBy`). */
export const SHIFTED = ["--import", join(import.meta.dirname, "shifted-date.mjs"), ...MAIN];

/**
 * The environment that moves a process's clock `ms` from this run's: on top of the offset the
 * run may already have (`pnpm test:later`), so "a minute ahead" stays a minute ahead of the rest.
 */
export function clockMovedBy(ms: number): { DESKLINE_TEST_DATE_OFFSET_MS: string } {
  return { DESKLINE_TEST_DATE_OFFSET_MS: String(Number(process.env.DESKLINE_TEST_DATE_OFFSET_MS ?? 0) + ms) };
}
/** Whether `dist/main.js` was built after the last change to anything under `src/`. */
function buildIsFresh(): boolean {
  const root = join(import.meta.dirname, "../..");
  let built: number;
  try {
    built = statSync(join(root, "dist/main.js")).mtimeMs;
  } catch {
    return false;
  }
  const sources = readdirSync(join(root, "src"), { recursive: true, withFileTypes: true });
  return sources.every(
    (entry) => !entry.isFile() || statSync(join(entry.parentPath, entry.name)).mtimeMs <= built,
  );
}

/** `cwd`: where it runs (the server package's directory unless given). */
export function spawnMain(
  env: Record<string, string>,
  args: string[] = MAIN,
  cwd = join(import.meta.dirname, "../.."),
): MainProcess {
  const child = spawn(process.execPath, args, {
    cwd,
    env: { ...process.env, PORT: "0", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  const waiting: { pattern: RegExp; done: () => void }[] = [];
  const onOutput = (chunk: Buffer) => {
    output += chunk.toString();
    for (const w of waiting.filter((w) => w.pattern.test(output))) {
      waiting.splice(waiting.indexOf(w), 1);
      w.done();
    }
  };
  child.stdout?.on("data", onOutput);
  child.stderr?.on("data", onOutput);
  const logged = (pattern: RegExp) =>
    new Promise<void>((resolve, reject) => {
      if (pattern.test(output)) return resolve();
      waiting.push({ pattern, done: resolve });
      void exited.then((code) => reject(new Error(`main exited early with ${code}: ${output}`)));
    });
  const baseUrl = logged(/"baseUrl":"[^"]+"/).then(() => /"baseUrl":"([^"]+)"/.exec(output)?.[1] as string);
  // A process that exits before it listens must not leave an unhandled rejection.
  baseUrl.catch(() => {});
  const ready = async () => {
    const url = await baseUrl;
    await eventually(
      async () => (await fetch(`${url}/readyz`)).status,
      (status) => status === 200,
      `${url}/readyz`,
    );
    return url;
  };
  return { child, baseUrl, ready, output: () => output, exited, logged };
}

/** What a command printed (stdout and stderr, in arrival order) and how it ended. */
export interface Finished {
  code: number | null;
  output: string;
}

/**
 * Runs `command args` to its end with exactly `env` (callers merge `process.env` as they need),
 * collecting everything it prints. `timeoutMs` kills a hung run so the test fails with what it
 * printed instead of waiting out vitest's timeout.
 */
export function runToEnd(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<Finished> {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ["ignore", "pipe", "pipe"],
    ...(options.timeoutMs ? { timeout: options.timeoutMs } : {}),
  });
  let output = "";
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout.on("data", collect);
  child.stderr.on("data", collect);
  // "close", not "exit": the pipes may still hold the last of the output when the process exits.
  return new Promise((done) => child.once("close", (code) => done({ code, output })));
}

/** How often `eventually` (and the other waits of the tests) look again. */
export const POLL: BackoffPolicy = { firstMs: 200 };

/** Polls `probe` until `accept` says yes; fails after `timeoutMs` (30 s), showing the last value. */
export async function eventually<T>(
  probe: () => Promise<T>,
  accept: (value: T) => boolean,
  what: string,
  timeoutMs = 30_000,
): Promise<T> {
  let last: T | undefined;
  const accepted = await retry(
    POLL,
    async () => {
      last = await probe();
      return accept(last) ? { value: last } : AGAIN;
    },
    {
      giveUp: giveUpAfter(
        timeoutMs,
        () => new Error(`timed out waiting for ${what}: ${JSON.stringify(last)}`),
      ),
    },
  );
  return (accepted as { value: T }).value;
}
