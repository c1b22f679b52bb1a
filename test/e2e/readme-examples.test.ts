// Every runnable example of the README, of every page of docs/ and of the CLI's README, run as
// written against the built server: one bash session per `## ` section (rules in
// ../helpers/readme-examples.ts), with `$B`, `$ADMIN_TOKEN`, `$KEY` (every scope) and `$WS` set,
// `deskline` on PATH (the built binary), jq and curl; each `js` block as a module with a workspace
// of its own in `DESKLINE_API_KEY` and `DESKLINE_BASE_URL`. Every API answer goes through the
// spec-checking proxy and must be a success.
import { execFile, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, inject, it } from "vitest";
import { readmeSections, sectionScript } from "../helpers/readme-examples.js";
import { CLI_BIN, newWorld, type World } from "../helpers/world.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** The pages whose examples run: the README, every page of docs/ (new ones too), the CLI's README. */
const PAGES = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/${name}`),
  "apps/cli/README.md",
];
const sections = PAGES.flatMap((page) =>
  readmeSections(readFileSync(join(ROOT, page), "utf8"), page).map((section) => ({ page, section })),
);
const runnable = sections.filter(({ section }) => section.blocks.length > 0);
const modules = sections.flatMap(({ page, section }) =>
  section.modules.map((block) => ({ page, section: section.title, block })),
);

/** Files the CLI section's examples read, as a reader would have them. */
const FIXTURES: Record<string, string> = {
  "crm-export.csv":
    "name,E-Mail,CRM Id,tags\nAda Lovelace,ada@example.com,4711,vip\nCharles Babbage,charles@example.com,4712,\n",
  "new.jsonl": `${JSON.stringify({ name: "Grace Hopper", email: "grace@example.com", tags: ["vip"] })}\n`,
};

/**
 * How long a section's session may run before it is killed, so the failure says after which
 * example it stopped. The CLI's sections take 23–28 s of a CI run (a process per `deskline`);
 * with two busy loops beside a CI run on its two cores, one ran past 50 s. Their tests get a
 * minute more.
 */
const SESSION_LIMIT_MS = 100_000;

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

interface Session {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * A session on the run's clock: under a moved `Date` (`pnpm test:later`) the CLI gets the run's
 * preload, and `date` (a wrapper in `bin`, `date -d` left alone) says the moved time, so that an
 * example's `--since 1h` or `$(date +%s) - 6 * 3600` is not 60 days before the server's now.
 */
function runClock(bin: string): Record<string, string> {
  const offset = process.env.DESKLINE_TEST_DATE_OFFSET_MS;
  if (!offset || Number(offset) === 0) return {};
  const real = (process.env.PATH ?? "")
    .split(":")
    .map((dir) => join(dir, "date"))
    .find((path) => existsSync(path));
  if (!real) throw new Error("no date on PATH");
  const seconds = Math.round(Number(offset) / 1000);
  const wrapper = [
    "#!/bin/sh",
    `case " $* " in *" -d"*|*" --date"*|*" -r"*|*" --reference"*|*" -s"*|*" --set"*) exec "${real}" "$@";; esac`,
    `exec "${real}" -d "@$(( $("${real}" +%s) + ${seconds} ))" "$@"`,
    "",
  ].join("\n");
  writeFileSync(join(bin, "date"), wrapper);
  chmodSync(join(bin, "date"), 0o755);
  return { NODE_OPTIONS: process.env.NODE_OPTIONS ?? "", DESKLINE_TEST_DATE_OFFSET_MS: offset };
}

async function runSession(script: string, w: World): Promise<Session> {
  const dir = join(w.scratch, "session");
  const bin = join(w.scratch, "bin");
  mkdirSync(dir, { recursive: true });
  mkdirSync(bin, { recursive: true });
  for (const [name, text] of Object.entries(FIXTURES)) writeFileSync(join(dir, name), text);
  writeFileSync(join(bin, "deskline"), `#!/bin/sh\nexec "${process.execPath}" "${CLI_BIN}" "$@"\n`);
  chmodSync(join(bin, "deskline"), 0o755);
  const child = spawn("bash", ["-c", script], {
    cwd: dir,
    env: {
      PATH: `${bin}:${process.env.PATH}`,
      HOME: w.scratch,
      XDG_CONFIG_HOME: join(w.scratch, "config"),
      XDG_STATE_HOME: join(w.scratch, "state"),
      B: w.baseUrl,
      ADMIN_TOKEN: inject("adminToken"),
      KEY: w.key,
      WS: w.workspaceId,
      DESKLINE_BASE_URL: w.baseUrl,
      DESKLINE_API_KEY: w.key,
      ...runClock(bin),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk;
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk;
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), SESSION_LIMIT_MS);
  const code = await new Promise<number | null>((done) => child.once("close", done));
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** The session's script exited 0; if not, the message says after which example it stopped. */
function expectRanToTheEnd(session: Session, page: string): void {
  const where = session.stderr
    .split("\n")
    .filter((l) => l.startsWith(`== ${page}:`))
    .pop();
  expect(
    session.code,
    `failed after ${where}\n${session.stderr.slice(-3000)}\n${session.stdout.slice(-2000)}`,
  ).toBe(0);
}

/**
 * Runs a page's `js` block as a module of its own. Written under the repository's .tmp/ so that
 * bare imports resolve from its node_modules, as in a reader's project.
 */
async function runModule(name: string, code: string, env: NodeJS.ProcessEnv) {
  const dir = join(ROOT, ".tmp", "readme-modules");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, name);
  writeFileSync(file, `${code}\n`);
  return new Promise<{ error: Error | null; code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(process.execPath, [file], { env, timeout: 20_000 }, (error, stdout, stderr) =>
      resolve({ error, code: error ? Number(error.code ?? -1) : 0, stdout, stderr }),
    ),
  );
}

/** Every API answer the proxy saw is as the spec says, and none failed but the `expected` ones. */
function expectDocumentedSuccesses(w: World, expected: unknown[]): void {
  expect(w.proxy.problems()).toEqual([]);
  const failures = w.proxy.exchanges.filter((e) => e.status >= 400);
  expect(failures.map((e) => `${e.method} ${e.path} ${e.status} ${JSON.stringify(e.body)}`)).toEqual(
    expected,
  );
}

describe("README and docs examples", () => {
  it("the sections a reader follows are run, not skipped", () => {
    expect(runnable.map(({ page, section }) => `${page}: ${section.title}`)).toEqual(
      expect.arrayContaining([
        "README.md: A five-minute tour",
        "docs/api.md: A contact sync with curl",
        "docs/cli.md: The `deskline` command line",
        "docs/webhooks.md: Receive webhooks",
        "apps/cli/README.md: Every command group",
      ]),
    );
    // The tour's SDK and webhook examples run as modules, as do the SDK page's.
    expect(modules.filter((m) => m.page === "README.md").map((m) => m.section)).toEqual([
      "A five-minute tour",
      "A five-minute tour",
    ]);
    expect(modules.filter((m) => m.page === "docs/sdk.md").length).toBeGreaterThanOrEqual(3);
    for (const { page, section } of sections)
      for (const skipped of section.skipped) expect(skipped.reason, `${page}:${skipped.line}`).not.toBe("");
  });

  it.each(runnable.map(({ page, section }) => [`${page}: ${section.title}`, page, section] as const))(
    "%s: every shell example runs and every API answer is a documented success",
    async (_title, page, section) => {
      world = await newWorld();
      const session = await runSession(sectionScript(section, page), world);
      expectRanToTheEnd(session, page);
      expectDocumentedSuccesses(world, []);
      expect(session.stdout).not.toMatch(/"error"\s*:\s*\{/);
      expect(world.proxy.exchanges.length).toBeGreaterThan(0);
      // Endpoints the examples register point at example hosts: nothing may have been sent there.
      for (const endpoint of await world.sdk.webhookEndpoints.list().toArray()) {
        expect(await world.sdk.webhookEndpoints.listAttempts(endpoint.id).toArray()).toEqual([]);
      }
    },
    SESSION_LIMIT_MS + 60_000,
  );

  // The receivers' code (Express and Koa) cannot listen on a reader's port here, but it must at
  // least load and build its app against the installed packages: a renamed export, a wrong
  // subpath or a changed signature fails. The SDK's examples call a workspace of their own,
  // through the spec-checking proxy.
  it.each(
    modules.map(({ page, section, block }) => [`${section}, ${page}:${block.line}`, page, block] as const),
  )("the JavaScript example at %s loads and runs", async (_where, page, block) => {
    world = await newWorld();
    const w = world;
    const result = await runModule(`${page.replace(/[/.]/g, "-")}-${block.line}.mjs`, block.code, {
      ...process.env,
      DESKLINE_WEBHOOK_SECRET: "whsec_dGVzdCBzZWNyZXQgb2YgdGhlIFJFQURNRSBleGFtcGxl",
      DESKLINE_API_KEY: w.key,
      DESKLINE_BASE_URL: w.baseUrl,
    });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    // `console.log(…); // 200 400`: what the page says it prints, it prints.
    for (const [, printed] of block.code.matchAll(/console\.log\(.*\);\s*\/\/\s*(.+)$/gm))
      expect(result.stdout.split("\n")).toContain(printed?.trim());
    expectDocumentedSuccesses(
      w,
      // The SDK page's conflict example is refused on purpose, once.
      page === "docs/sdk.md" && block.code.includes("ConflictError")
        ? [expect.stringMatching(/^POST \/open\/v1\/contacts 409 .*email_taken/)]
        : [],
    );
  });

  // A reader who runs the README's receiver before creating an endpoint has no secret yet: the
  // example still runs, and says what to set.
  it("the README's verifier example runs without DESKLINE_WEBHOOK_SECRET and says what to set", async () => {
    const verifier = modules.find((m) => m.page === "README.md" && m.block.code.includes("signPayload"));
    if (!verifier) throw new Error("README.md: no verifier example");
    const { DESKLINE_WEBHOOK_SECRET: _unset, ...env } = process.env;
    const result = await runModule("README-verifier-without-secret.mjs", verifier.block.code, env);
    expect(result.error, result.stderr).toBeNull();
    expect(result.stdout).toContain("DESKLINE_WEBHOOK_SECRET is not set");
    expect(result.stdout.split("\n")).toContain("200 400");
  });
});
