import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll } from "vitest";

/**
 * The real server process (`src/main.ts`, or its build) as a child, for tests of what only a process shows:
 * start-up, signals, a SIGKILL. Whatever a test file starts is killed after its tests.
 */

const started: ChildProcess[] = [];
afterAll(() => {
  for (const child of started)
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

export interface MainProcess {
  child: ChildProcess;
  /** Resolves with the base URL once the process logs that it listens. */
  baseUrl: Promise<string>;
  /** Everything it wrote so far, stdout and stderr. */
  output: () => string;
  /** Resolves with the exit code (null after a signal). */
  exited: Promise<number | null>;
}

/** How to run the server: from source through tsx (the default), or the build (`dist/main.js`). */
export const FROM_SOURCE = ["--import", "tsx", "src/main.ts"];
export const BUILT = ["dist/main.js"];

export function startMain(env: Record<string, string>, args: string[] = FROM_SOURCE): MainProcess {
  const child = spawn(process.execPath, args, {
    cwd: join(import.meta.dirname, "../.."),
    env: { ...process.env, PORT: "0", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  started.push(child);
  let output = "";
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  const baseUrl = new Promise<string>((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const match = /"baseUrl":"([^"]+)"/.exec(output);
      if (match?.[1]) resolve(match[1]);
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    void exited.then((code) => reject(new Error(`main exited early with ${code}: ${output}`)));
  });
  return { child, baseUrl, output: () => output, exited };
}

/** Polls `probe` until `accept` says yes; fails after 30 s, showing the last value. */
export async function eventually<T>(
  probe: () => Promise<T>,
  accept: (value: T) => boolean,
  what: string,
): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await probe();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((done) => setTimeout(done, 200));
  }
}
