// `pnpm deskline …` works right after `pnpm install` on a fresh clone, with no
// separate build. A clone-like copy of the checkout (the files git would clone: tracked and new
// ones, nothing git ignores, so no node_modules and no dist), installed as a user installs it
// (from the local pnpm store, offline), then `pnpm deskline --version` run as a user runs it.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = join(import.meta.dirname, "../..");
let copy: string | undefined;

afterAll(async () => {
  if (copy) await rm(copy, { recursive: true, force: true });
});

/** What a clone holds: every file git tracks or would add, none it ignores. */
async function cloneLike(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "deskline-clone-"));
  const { stdout } = await run("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: root,
    maxBuffer: 16 << 20,
  });
  for (const file of stdout.split("\0").filter(Boolean)) {
    // Tracked but deleted in this working tree: a clone of the commit to come would lack it too.
    if (!existsSync(join(root, file))) continue;
    await cp(join(root, file), join(dir, file), { preserveTimestamps: true, force: true });
  }
  return dir;
}

describe("a fresh clone", () => {
  it("runs `pnpm deskline` right after `pnpm install`", async () => {
    copy = await cloneLike();
    expect(existsSync(join(copy, "apps/cli/dist")), "a clone has no build").toBe(false);
    expect(existsSync(join(copy, "apps/cli/src/bin.ts"))).toBe(true);

    // Offline: everything the lockfile names is in the store since this checkout's own install.
    await run("pnpm", ["install", "--frozen-lockfile", "--offline"], { cwd: copy, maxBuffer: 64 << 20 });
    expect(existsSync(join(copy, "apps/cli/dist/bin.js")), "the postinstall builds the CLI").toBe(true);
    const { stdout } = await run("pnpm", ["--silent", "deskline", "--version"], { cwd: copy });
    const cli = JSON.parse(await readFile(join(copy, "apps/cli/package.json"), "utf8"));
    expect(stdout.trim()).toBe(cli.version);
    const help = await run("pnpm", ["--silent", "deskline", "contacts", "--help"], { cwd: copy });
    expect(help.stdout).toContain("Usage: deskline contacts");
  }, 600_000);
});
