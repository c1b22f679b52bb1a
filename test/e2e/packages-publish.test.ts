// The release of the three public packages, short of the registry: each is packed as
// `changeset publish` would publish it and given to `npm publish --dry-run` (against a registry on
// loopback that this test runs and that must receive no upload), and `changeset version` is run on
// a copy of the workspace's manifests to show that the pending changesets become versions and
// changelogs. The tests run side by side (each reads the built files or copies what it changes),
// their tools asynchronously.
import { execFile, spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { builtPackage, runAsync } from "@deskline/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PUBLIC = [
  { dir: "packages/sdk", entry: "index.js" },
  { dir: "packages/webhook-verifier", entry: "index.js" },
  { dir: "apps/cli", entry: "bin.js" },
] as const;

/** A registry on loopback that answers 404 to every read and records every request. */
let registry: Server;
let registryUrl: string;
const requests: { method: string; url: string }[] = [];
let scratch: string;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "deskline-publish-"));
  registry = createServer((request, response) => {
    requests.push({ method: request.method ?? "", url: request.url ?? "" });
    request.resume();
    response.writeHead(404, { "content-type": "application/json" }).end('{"error":"Not found"}');
  });
  await new Promise<void>((resolve) => registry.listen(0, "127.0.0.1", resolve));
  registryUrl = `http://127.0.0.1:${(registry.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  await new Promise((resolve) => registry.close(resolve));
  rmSync(scratch, { recursive: true, force: true });
});

/** npm with nothing of the user's: its own empty config and cache, and the loopback registry. */
const npmEnv = (dir: string): NodeJS.ProcessEnv => {
  writeFileSync(join(dir, "npmrc"), "");
  return {
    PATH: process.env.PATH,
    HOME: dir,
    npm_config_userconfig: join(dir, "npmrc"),
    npm_config_cache: join(dir, "npm-cache"),
    npm_config_registry: registryUrl,
    npm_config_update_notifier: "false",
    npm_config_audit: "false",
    npm_config_fund: "false",
  };
};

function run(command: string, args: string[], cwd: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      command,
      args,
      { cwd, env: npmEnv(cwd), encoding: "utf8", timeout: 120_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === "number" ? error.code : null) : 0, stdout, stderr }),
    );
  });
}

describe.concurrent.each(PUBLIC)("$dir", ({ dir, entry }) => {
  const pkg = builtPackage(join(ROOT, dir));
  afterAll(() => pkg.dispose());

  it("packs with its README and built files only, and passes npm publish --dry-run", async () => {
    pkg.ensureBuilt(entry);
    // `pnpm pack`: it fails the test when it fails, or packs no tarball.
    const path = await pkg.packed();

    const files = spawnSync("tar", ["-tzf", path], { encoding: "utf8" }).stdout.trim().split("\n");
    expect(files).toContain("package/package.json");
    expect(files).toContain("package/README.md");
    expect(files).toContain(`package/dist/${entry}`);
    if (existsSync(join(ROOT, dir, "CHANGELOG.md"))) expect(files).toContain("package/CHANGELOG.md");
    expect(files.filter((file) => /^package\/(src|test|bench|scripts)\//.test(file))).toEqual([]);
    // pnpm pack writes the workspace's versions in place of `workspace:*`, as a user installs them.
    const manifest = spawnSync("tar", ["-xzOf", path, "package/package.json"], { encoding: "utf8" }).stdout;
    expect(manifest).not.toContain("workspace:");
    expect(JSON.parse(manifest).name).toBe(pkg.manifest.name);

    const home = mkdtempSync(join(scratch, "npm-"));
    const before = requests.length;
    // Asynchronously: the registry answers from this process, which a spawnSync would block.
    const publish = await run("npm", ["publish", "--dry-run", "--access", "public", path], home);
    expect(publish.code, `${publish.stdout}\n${publish.stderr}`).toBe(0);
    const output = `${publish.stdout}\n${publish.stderr}`;
    expect(output).toContain(`${pkg.manifest.name}@${pkg.manifest.version}`);
    expect(output).toContain("README.md");
    // A dry run may look the package up; it must never upload it.
    expect(requests.slice(before).filter((r) => r.method !== "GET")).toEqual([]);
  });

  it("passes publint and attw --pack, as pnpm release runs them", async () => {
    pkg.ensureBuilt(entry);
    const lint = await runAsync("pnpm", ["run", "lint:package"], pkg.dir);
    expect(lint.status, `${lint.stdout}\n${lint.stderr}`).toBe(0);
  });
});

describe.concurrent("changesets", () => {
  it("turns every pending changeset into a version bump and a CHANGELOG.md entry per public package", async () => {
    // The manifests of every workspace package, the workspace file and .changeset/: all that
    // `changeset version` reads and writes.
    const copy = mkdtempSync(join(scratch, "workspace-"));
    for (const file of ["package.json", "pnpm-workspace.yaml"]) cpSync(join(ROOT, file), join(copy, file));
    cpSync(join(ROOT, ".changeset"), join(copy, ".changeset"), { recursive: true });
    const all = ["apps", "packages"].flatMap((group) =>
      readdirSync(join(ROOT, group))
        .filter((name) => existsSync(join(ROOT, group, name, "package.json")))
        .map((name) => `${group}/${name}`),
    );
    for (const dir of all) {
      mkdirSync(join(copy, dir), { recursive: true });
      cpSync(join(ROOT, dir, "package.json"), join(copy, dir, "package.json"));
      if (existsSync(join(ROOT, dir, "CHANGELOG.md")))
        cpSync(join(ROOT, dir, "CHANGELOG.md"), join(copy, dir, "CHANGELOG.md"));
    }
    const pending = readdirSync(join(ROOT, ".changeset")).filter(
      (name) => name.endsWith(".md") && name !== "README.md",
    );
    expect(pending.length).toBeGreaterThan(0);
    const summaries = pending.map((name) => {
      const text = readFileSync(join(ROOT, ".changeset", name), "utf8");
      const [, front = "", body = ""] = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(text) ?? [];
      const packages = [...front.matchAll(/^"([^"]+)":\s*(patch|minor|major)$/gm)].map((m) => m[1] as string);
      return { name, packages, firstLine: body.trim().split("\n")[0] as string };
    });

    const version = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) =>
      execFile(
        join(ROOT, "node_modules", ".bin", "changeset"),
        ["version"],
        {
          cwd: copy,
          encoding: "utf8",
          env: { PATH: process.env.PATH, HOME: copy, CI: "true" },
          timeout: 120_000,
        },
        (error, stdout, stderr) =>
          resolve({
            status: error ? (typeof error.code === "number" ? error.code : null) : 0,
            stdout,
            stderr,
          }),
      ),
    );
    expect(version.status, `${version.stdout}\n${version.stderr}`).toBe(0);
    expect(
      readdirSync(join(copy, ".changeset")).filter((n) => n.endsWith(".md") && n !== "README.md"),
    ).toEqual([]);

    for (const { dir } of PUBLIC) {
      const before = JSON.parse(readFileSync(join(ROOT, dir, "package.json"), "utf8"));
      const after = JSON.parse(readFileSync(join(copy, dir, "package.json"), "utf8"));
      const mine = summaries.filter((s) => s.packages.includes(before.name));
      expect(mine.length, `a changeset for ${before.name}`).toBeGreaterThan(0);
      expect(after.version).not.toBe(before.version);
      const changelog = readFileSync(join(copy, dir, "CHANGELOG.md"), "utf8");
      expect(changelog).toMatch(
        new RegExp(`^# ${before.name}\\n\\n## ${after.version.replace(/\./g, "\\.")}\\n`),
      );
      for (const summary of mine) expect(changelog).toContain(summary.firstLine);
    }
    // Private packages are neither versioned nor given a changelog.
    for (const dir of all.filter((d) => !PUBLIC.some((p) => p.dir === d))) {
      const manifest = JSON.parse(readFileSync(join(ROOT, dir, "package.json"), "utf8"));
      expect(manifest.private).toBe(true);
      expect(JSON.parse(readFileSync(join(copy, dir, "package.json"), "utf8")).version).toBe(
        manifest.version,
      );
      expect(existsSync(join(copy, dir, "CHANGELOG.md"))).toBe(false);
    }
  });
});
