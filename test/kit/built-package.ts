// Checks of a workspace package as users install it, shared by the package tests of the SDK and
// the verifier: build once if needed, what a built entry imports, and a project that installs only the packed tarball and typechecks against it. The
// slow checks run their tools asynchronously, so a file's checks can run side by side, and the
// package is packed once for all of them.
import { execFile, type SpawnSyncReturns, spawnSync } from "node:child_process";
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

/** How a command ended: its exit status (null when a signal or the timeout ended it) and output. */
export interface Finished {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end without blocking the event loop (tests beside it go on). */
export function runAsync(command: string, args: string[], cwd: string): Promise<Finished> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd, encoding: "utf8", timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const status = error ? (typeof error.code === "number" ? error.code : null) : 0;
        resolve({ status, stdout, stderr });
      },
    );
  });
}

export interface BuiltPackage {
  dir: string;
  manifest: Record<string, any>;
  /** Runs a command in the package's folder. */
  run(command: string, args: string[]): SpawnSyncReturns<string>;
  /** Builds with tsup unless `dist/<entry>` exists (the root `pnpm test` builds first). */
  ensureBuilt(entry: string): void;
  /**
   * The tarball `pnpm pack` makes (what `pnpm publish` uploads), packed on the first call and
   * shared by every later one; {@link dispose} removes it.
   */
  packed(): Promise<string>;
  /** Removes what {@link packed} made. */
  dispose(): void;
  /** Every file a built entry reaches through relative imports (chunks), and what else it imports. */
  imports(entry: string): { files: number; external: string[] };
  /**
   * Installs the packed tarball ({@link packed}) alone in a new project outside the
   * workspace (with the dependencies its manifest declares, taken from the workspace's install,
   * and `@types/node`), writes `files` there and runs tsc over them with library checks on: the
   * shipped declarations must resolve without any workspace package (no private
   * `@deskline/spec`). tsc's exit status and output.
   */
  typecheckPacked(files: Record<string, string>, options?: { types?: string[] }): Promise<Finished>;
  /**
   * Runs `script(load)` in a node process of its own, as an ES module or as CommonJS (`load` is
   * `await import` or `require`), where the package resolves by its name (self-reference) as it
   * does for a user; what the script printed, parsed as JSON. Throws when the process fails.
   */
  loadAs(type: "module" | "commonjs", script: (load: string) => string): Promise<unknown>;
}

export function builtPackage(dir: string): BuiltPackage {
  const bin = (name: string) => join(dir, "node_modules", ".bin", name);
  const run = (command: string, args: string[]) =>
    spawnSync(command, args, { cwd: dir, encoding: "utf8", timeout: 120_000 });
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  let packDir: string | undefined;
  let tarball: Promise<string> | undefined;
  const packed = () => {
    packDir ??= mkdtempSync(join(tmpdir(), "deskline-pack-"));
    tarball ??= packInto(dir, packDir);
    return tarball;
  };
  return {
    dir,
    manifest,
    run,
    ensureBuilt(entry) {
      if (existsSync(join(dir, "dist", entry))) return;
      const build = run(bin("tsup"), []);
      if (build.status !== 0) throw new Error(`tsup failed:\n${build.stdout}\n${build.stderr}`);
    },
    packed,
    dispose() {
      if (packDir) rmSync(packDir, { recursive: true, force: true });
    },
    async loadAs(type, script) {
      const body = script(type === "module" ? "await import" : "require");
      const wrapped = type === "module" ? body : `(async () => { ${body} })()`;
      const result = await runAsync(process.execPath, ["--input-type", type, "-e", wrapped], dir);
      if (result.status !== 0) throw new Error(`node --input-type ${type} failed:\n${result.stderr}`);
      return JSON.parse(result.stdout);
    },
    imports: (entry) => importsOf(join(dir, "dist", entry)),
    typecheckPacked: async (files, options) =>
      typecheckTarball(await packed(), { dir, manifest, types: options?.types ?? [] }, files),
  };
}

/** `pnpm pack` of the package in `dir` into `out`; the tarball's path. */
async function packInto(dir: string, out: string): Promise<string> {
  const pack = await runAsync("pnpm", ["pack", "--pack-destination", out], dir);
  const tarball = readdirSync(out).find((name) => name.endsWith(".tgz"));
  if (pack.status !== 0 || !tarball) throw new Error(`pnpm pack failed:\n${pack.stdout}\n${pack.stderr}`);
  return join(out, tarball);
}

/** Every file a built entry reaches through relative imports (chunks), and what else it imports. */
function importsOf(entry: string): { files: number; external: string[] } {
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
  visit(entry);
  return { files: seen.size, external: [...external].sort() };
}

/** See {@link BuiltPackage.typecheckPacked}: `tarball` installed alone in a new project, then tsc. */
async function typecheckTarball(
  tarball: string,
  { dir, manifest, types }: { dir: string; manifest: Record<string, any>; types: string[] },
  files: Record<string, string>,
): Promise<Finished> {
  const tmp = mkdtempSync(join(tmpdir(), "deskline-packed-"));
  try {
    const project = join(tmp, "project");
    const modules = join(project, "node_modules");
    const installed = join(modules, ...(manifest.name as string).split("/"));
    mkdirSync(installed, { recursive: true });
    const untar = spawnSync("tar", ["-xzf", tarball, "-C", installed, "--strip-components=1"]);
    if (untar.status !== 0) throw new Error(`tar failed: ${untar.stderr}`);
    // What an install would bring: the declared dependencies (no network here: the workspace's
    // copies), and the user's own @types/node.
    const link = (name: string, from: string) => {
      mkdirSync(dirname(join(modules, name)), { recursive: true });
      symlinkSync(realpathSync(join(from, "node_modules", name)), join(modules, name), "dir");
    };
    for (const name of Object.keys(manifest.dependencies ?? {})) link(name, dir);
    link("@types/node", ROOT);
    // A user's own types of a framework the files use (`@types/express`), from the package's devDependencies.
    for (const name of types) link(name, dir);
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
    return await runAsync(
      process.execPath,
      [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", project],
      tmp,
    );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** One test per module system (`%s` in `title`): `script` run by `loadAs` prints `expected`. */
export function itLoadsAs(
  pkg: BuiltPackage,
  title: string,
  script: (load: string) => string,
  expected: unknown,
): void {
  it.each(["module", "commonjs"] as const)(title, async (type) => {
    expect(await pkg.loadAs(type, script)).toEqual(expected);
  });
}
