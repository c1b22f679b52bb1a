// What the two generated-client tests (openapi-generator.test.ts, generated-clients.test.ts) share:
// a world and scratch folder per test, running a generator or driver to its end, reading what a
// generator printed, finding an installed tool, and compiling a driver as a strict user project.
import { type SpawnOptions, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { newWorld, type World } from "./world.js";

export const root = join(import.meta.dirname, "../..");
/** The programs that drive each generated client (round trips, unknown event types). */
export const drivers = join(root, "test/generated-clients");

/**
 * The steps every round-trip driver reports for its contact and ticket half, in its order: create,
 * read, update and list a contact, then the same for a ticket.
 */
export const CONTACT_AND_TICKET_STEPS = [
  ["createContact", 201],
  ["getContact", 200],
  ["updateContact", 200],
  ["listContacts", 200],
  ["createTicket", 201],
  ["getTicket", 200],
  ["updateTicket", 200],
  ["listTickets", 200],
];

/** A fresh world and an empty scratch folder `.tmp/<prefix>…` for one test. */
export async function openScratchWorld(prefix: string): Promise<{ world: World; scratch: string }> {
  // A workspace of its own per client, so one's events are not in the other's listing.
  const world = await newWorld();
  // Inside the repository, so generated TypeScript finds its dependencies in its node_modules.
  mkdirSync(join(root, ".tmp"), { recursive: true });
  const scratch = mkdtempSync(join(root, `.tmp/${prefix}`));
  return { world, scratch };
}

/** Closes what {@link openScratchWorld} opened; fails if any answer broke the spec. */
export async function closeScratchWorld(world: World, scratch: string): Promise<void> {
  const problems = world.proxy.problems();
  await world.close();
  rmSync(scratch, { recursive: true, force: true });
  // Every answer the clients got was also checked against the spec by the proxy.
  expect(problems).toEqual([]);
}

/** Runs a command to its end, with everything it printed. */
export function run(command: string, args: string[], options: SpawnOptions = {}) {
  return new Promise<{ code: number | null; output: string; stdout: string }>((done) => {
    const child = spawn(command, args, { ...options, timeout: 240_000 });
    let output = "";
    let stdout = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      stdout += chunk.toString();
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once("close", (code) => done({ code, output, stdout }));
  });
}

/** The last line a driver printed, parsed: its JSON summary. */
export const summaryOf = (stdout: string) => JSON.parse(stdout.trim().split("\n").at(-1) as string);

/** The non-blank lines a command printed, trimmed and without colour codes. */
export const printedLines = (output: string) =>
  output
    // biome-ignore lint/suspicious/noControlCharactersInRegex: colour codes, if any slip through
    .replace(/\u001b\[[0-9;]*m/g, "")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");

/**
 * The tool an install script put in place (the last line of `<script> --check`), or a skip (a
 * failure under CI) that names the install command.
 */
export function installedTool(
  script: string,
  name: string,
  install: string,
  skip: (reason: string) => void,
): string | undefined {
  const check = spawnSync("bash", [join(root, script), "--check"], { encoding: "utf8" });
  const tool = check.status === 0 ? check.stdout.trim().split("\n").at(-1) : undefined;
  if (tool) return tool;
  if (process.env.CI) throw new Error(`${name} is not installed: ${install}`);
  skip(`${name} is not installed: ${install}`);
  return undefined;
}

/**
 * Compiles `scratch` as a user's strict project would (`tsc -p`), the driver against the generated
 * code; `project` gives the module settings and which files make the project.
 */
export async function compileStrict(
  scratch: string,
  project: { module: string; moduleResolution: string } & ({ files: string[] } | { include: string[] }),
): Promise<void> {
  const { module, moduleResolution, ...sources } = project;
  const tsconfig = {
    compilerOptions: {
      strict: true,
      module,
      moduleResolution,
      target: "ES2022",
      lib: ["ES2023", "DOM", "DOM.Iterable"],
      types: [],
      noEmit: true,
      skipLibCheck: true,
    },
    ...sources,
  };
  writeFileSync(join(scratch, "tsconfig.json"), JSON.stringify(tsconfig));
  const compiled = await run(process.execPath, [
    join(root, "node_modules/typescript/bin/tsc"),
    "-p",
    scratch,
  ]);
  expect(compiled.code, compiled.output).toBe(0);
}
