// Checks of a workspace package as users install it, shared by the package tests of the SDK and
// the verifier: build once if needed, publint, attw --pack, what a built entry imports, and a
// project that installs only the packed tarball and typechecks against it.
import { type SpawnSyncReturns, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface BuiltPackage {
  dir: string;
  manifest: Record<string, any>;
  /** Runs a command in the package's folder. */
  run(command: string, args: string[]): SpawnSyncReturns<string>;
  /** Builds with tsup unless `dist/<entry>` exists (the root `pnpm test` builds first). */
  ensureBuilt(entry: string): void;
  /** publint --strict's exit status and output. */
  publint(): SpawnSyncReturns<string>;
  /** attw --pack's problems for node16 and bundlers (node10 ignores `exports`, so it is left out). */
  attwProblems(): { kind: string; resolutionKind?: string; entrypoint?: string }[];
  /** Every file a built entry reaches through relative imports (chunks), and what else it imports. */
  imports(entry: string): { files: number; external: string[] };
  /**
   * Packs the package (`pnpm pack`), installs the tarball alone in a new project outside the
   * workspace (with the dependencies its manifest declares, taken from the workspace's install,
   * and `@types/node`), writes `files` there and runs tsc over them with library checks on: the
   * shipped declarations must resolve without any workspace package (no private
   * `@deskline/spec`). tsc's exit status and output.
   */
  typecheckPacked(files: Record<string, string>): SpawnSyncReturns<string>;
  /**
   * Runs `script(load)` in a node process of its own, as an ES module or as CommonJS (`load` is
   * `await import` or `require`), where the package resolves by its name (self-reference) as it
   * does for a user; what the script printed, parsed as JSON. Throws when the process fails.
   */
  loadAs(type: "module" | "commonjs", script: (load: string) => string): unknown;
}

export function builtPackage(dir: string): BuiltPackage {
  const bin = (name: string) => join(dir, "node_modules", ".bin", name);
  const run = (command: string, args: string[]) =>
    spawnSync(command, args, { cwd: dir, encoding: "utf8", timeout: 120_000 });
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  return {
    dir,
    manifest,
    run,
    ensureBuilt(entry) {
      if (existsSync(join(dir, "dist", entry))) return;
      const build = run(bin("tsup"), []);
      if (build.status !== 0) throw new Error(`tsup failed:\n${build.stdout}\n${build.stderr}`);
    },
    publint: () => run(bin("publint"), ["--strict"]),
    loadAs(type, script) {
      const body = script(type === "module" ? "await import" : "require");
      const wrapped = type === "module" ? body : `(async () => { ${body} })()`;
      const result = run(process.execPath, ["--input-type", type, "-e", wrapped]);
      if (result.status !== 0) throw new Error(`node --input-type ${type} failed:\n${result.stderr}`);
      return JSON.parse(result.stdout);
    },
    attwProblems() {
      const result = run(bin("attw"), ["--pack", ".", "--format", "json", "--profile", "node16"]);
      const start = result.stdout.indexOf("{");
      if (start < 0) throw new Error(`attw printed no report:\n${result.stdout}\n${result.stderr}`);
      const report = JSON.parse(result.stdout.slice(start)) as {
        analysis: { problems?: { kind: string; resolutionKind?: string; entrypoint?: string }[] };
      };
      return (report.analysis.problems ?? []).filter((p) => p.resolutionKind !== "node10");
    },
    imports(entry) {
      const seen = new Set<string>();
      const external = new Set<string>();
      const visit = (file: string) => {
        if (seen.has(file)) return;
        seen.add(file);
        const code = readFileSync(file, "utf8");
        for (const m of code.matchAll(/(?:from\s*|import\s*\(?\s*|require\s*\(\s*)["']([^"']+)["']/g)) {
          const spec = m[1] as string;
          if (spec.startsWith(".")) visit(join(dirname(file), spec));
          else external.add(spec);
        }
      };
      visit(join(dir, "dist", entry));
      return { files: seen.size, external: [...external].sort() };
    },
    typecheckPacked(files) {
      const tmp = mkdtempSync(join(tmpdir(), "deskline-packed-"));
      try {
        const pack = run("pnpm", ["pack", "--pack-destination", tmp]);
        const tarball = readdirSync(tmp).find((name) => name.endsWith(".tgz"));
        if (pack.status !== 0 || !tarball)
          throw new Error(`pnpm pack failed:\n${pack.stdout}\n${pack.stderr}`);
        const project = join(tmp, "project");
        const modules = join(project, "node_modules");
        const installed = join(modules, ...(manifest.name as string).split("/"));
        mkdirSync(installed, { recursive: true });
        const untar = spawnSync("tar", ["-xzf", join(tmp, tarball), "-C", installed, "--strip-components=1"]);
        if (untar.status !== 0) throw new Error(`tar failed: ${untar.stderr}`);
        // What an install would bring: the declared dependencies (no network here: the workspace's
        // copies), and the user's own @types/node.
        const link = (name: string, from: string) => {
          mkdirSync(dirname(join(modules, name)), { recursive: true });
          symlinkSync(realpathSync(join(from, "node_modules", name)), join(modules, name), "dir");
        };
        for (const name of Object.keys(manifest.dependencies ?? {})) link(name, dir);
        link("@types/node", ROOT);
        const tsconfig = {
          compilerOptions: {
            strict: true,
            module: "NodeNext",
            moduleResolution: "NodeNext",
            target: "ES2022",
            noEmit: true,
            skipLibCheck: false,
            types: ["node"],
          },
        };
        writeFileSync(join(project, "package.json"), JSON.stringify({ private: true, type: "module" }));
        writeFileSync(join(project, "tsconfig.json"), JSON.stringify(tsconfig));
        for (const [name, text] of Object.entries(files)) writeFileSync(join(project, name), text);
        return spawnSync(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", project], {
          encoding: "utf8",
          timeout: 120_000,
        });
      } finally {
        rmSync(tmp, { recursive: true, force: true });
      }
    },
  };
}

/**
 * The two linters every published package passes, as tests of the calling file: publint --strict
 * on the manifest, and attw --pack (node16 CJS and ESM, bundlers) on the packed types.
 */
export function itPassesPackageLints(pkg: BuiltPackage): void {
  it("passes publint --strict", () => {
    const result = pkg.publint();
    expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
  }, 120_000);

  it("passes attw --pack for node16 (CJS and ESM) and bundlers", () => {
    // node10 resolution ignores `exports`, so subpaths cannot resolve there: that is the profile's
    // point, not a problem of a package.
    expect(pkg.attwProblems()).toEqual([]);
  }, 120_000);
}

/** One test per module system (`%s` in `title`): `script` run by `loadAs` prints `expected`. */
export function itLoadsAs(
  pkg: BuiltPackage,
  title: string,
  script: (load: string) => string,
  expected: unknown,
): void {
  it.each(["module", "commonjs"] as const)(title, (type) => {
    expect(pkg.loadAs(type, script)).toEqual(expected);
  });
}
