// Runs one command line and turns whatever happened into an exit code, in this one place.
import { reportError } from "./errors.js";
import { buildProgram } from "./program.js";

/** Runs `deskline <args>` and resolves to the exit code (never exits the process itself). */
export async function run(args: readonly string[]): Promise<number> {
  try {
    const program = await buildProgram(args);
    await program.parseAsync([...args], { from: "user" });
    return 0;
  } catch (error) {
    const { exitCode, lines } = reportError(error, args.includes("--json"));
    for (const line of lines) process.stderr.write(`${line}\n`);
    return exitCode;
  }
}
