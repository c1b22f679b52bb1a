// Checks of a workspace package as users install it, shared by the package tests of the SDK and
// the verifier: build once if needed, publint, attw --pack, and what a built entry imports.
import { type SpawnSyncReturns, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

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
}

export function builtPackage(dir: string): BuiltPackage {
  const bin = (name: string) => join(dir, "node_modules", ".bin", name);
  const run = (command: string, args: string[]) =>
    spawnSync(command, args, { cwd: dir, encoding: "utf8", timeout: 120_000 });
  return {
    dir,
    manifest: JSON.parse(readFileSync(join(dir, "package.json"), "utf8")),
    run,
    ensureBuilt(entry) {
      if (existsSync(join(dir, "dist", entry))) return;
      const build = run(bin("tsup"), []);
      if (build.status !== 0) throw new Error(`tsup failed:\n${build.stdout}\n${build.stderr}`);
    },
    publint: () => run(bin("publint"), ["--strict"]),
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
  };
}
