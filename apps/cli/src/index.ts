// Runs one command line and turns whatever happened into an exit code, in this one place.
import { reportError } from "./errors.js";
import { buildProgram } from "./program.js";
import { inTerminal, type Terminal, terminal } from "./terminal.js";

export type { Terminal } from "./terminal.js";

/**
 * Runs `deskline <args>` and resolves to the exit code (never exits the process itself): on the
 * process's stdout, stderr and environment, or on `io`'s (terminal.ts).
 */
export function run(args: readonly string[], io?: Terminal): Promise<number> {
  return io ? inTerminal(io, () => runHere(args)) : runHere(args);
}

async function runHere(args: readonly string[]): Promise<number> {
  try {
    const program = await buildProgram(args);
    await program.parseAsync([...args], { from: "user" });
    return 0;
  } catch (error) {
    const { exitCode, lines } = reportError(error, args.includes("--json"));
    for (const line of lines) terminal().stderr.write(`${line}\n`);
    return exitCode;
  }
}
