// `pnpm test [vitest args]`: the type check, the lints, the build and every test, as one command.
// The type check (`pnpm typecheck`, about 30 s of one core) runs beside the rest rather than ahead
// of it: nothing after it reads what it checks (the builds only emit), and the first half minute
// of the tests leaves a core to spare (docs/development.md, "Types are checked beside the tests").
// Its output is printed whole once it ends; a failure fails the run and stops the tests at once.
import { spawn } from "node:child_process";

/** Runs `pnpm run <script>` (or a command), its output straight to ours unless `buffered`. */
function start(command, args, { buffered = false } = {}) {
  // A process group of its own, so that stopping it stops what it started (pnpm's tsc, vitest's workers).
  const child = spawn(command, args, {
    stdio: buffered ? ["ignore", "pipe", "pipe"] : "inherit",
    detached: true,
  });
  let output = "";
  if (buffered) {
    child.stdout.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
  }
  const exited = new Promise((done) => {
    child.once("close", (code, signal) => done(code ?? (signal ? 1 : 0)));
    child.once("error", (error) => {
      console.error(`test: ${command} ${args.join(" ")}: ${error.message}`);
      done(127);
    });
  });
  const stop = (signal = "SIGTERM") => {
    try {
      process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
  };
  return { exited, output: () => output, stop };
}

const typecheck = start("pnpm", ["run", "--silent", "typecheck"], { buffered: true });
let foreground;
let typeErrors = false;
let stopped = false;
const checked = typecheck.exited.then((code) => {
  if (stopped) return code;
  const output = typecheck.output().trim();
  console.log(code === 0 ? "test: typecheck passed" : `test: typecheck failed (exit ${code})`);
  if (output) console.log(output);
  if (code !== 0) {
    typeErrors = true;
    foreground?.stop();
  }
  return code;
});

// Ctrl-C reaches only this process's group: pass it on to both.
for (const signal of ["SIGINT", "SIGTERM"])
  process.on(signal, () => {
    stopped = true;
    typecheck.stop(signal);
    foreground?.stop(signal);
  });

let code = 0;
for (const [command, args] of [
  ["pnpm", ["run", "lint"]],
  ["pnpm", ["run", "spec:lint"]],
  ["pnpm", ["run", "build"]],
  ["pnpm", ["exec", "vitest", "run", ...process.argv.slice(2)]],
]) {
  if (typeErrors) break;
  foreground = start(command, args);
  code = await foreground.exited;
  if (code !== 0) break;
}
if (code !== 0 && !typeErrors) {
  stopped = true;
  typecheck.stop();
}
const typecheckCode = await checked;
process.exit(code || typecheckCode);
