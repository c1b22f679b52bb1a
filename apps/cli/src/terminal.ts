// Where a command line writes and which environment it reads: the process's own (`deskline` on a
// shell), or those `run` was given for it. Given ones let a program run command lines in its own
// process, each with its output and environment apart, as the CLI's tests run most of theirs
// (docs/development.md, "The CLI's tests"); every read of stdout, stderr or the environment goes
// through `terminal()`. Standard input stays the process's (`-` arguments read file descriptor 0).
import { AsyncLocalStorage } from "node:async_hooks";
import type { Writable } from "node:stream";

/** An output stream; `isTTY` as a terminal's (progress bars are drawn only on one). */
export type Output = Writable & { isTTY?: boolean };

export interface Terminal {
  stdout: Output;
  stderr: Output;
  env: NodeJS.ProcessEnv;
}

const given = new AsyncLocalStorage<Terminal>();

/** The terminal of the command line running now: the one `inTerminal` gave it, else the process's. */
export function terminal(): Terminal {
  return given.getStore() ?? { stdout: process.stdout, stderr: process.stderr, env: process.env };
}

/** Runs `work` (and everything it starts) on `io`. */
export function inTerminal<T>(io: Terminal, work: () => Promise<T>): Promise<T> {
  return given.run(io, work);
}
