// The package as users install it: lint the manifest and types (publint, attw --pack), keep Node
// out of the browser entry, and load the built files through the exports map.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";

const pkgDir = fileURLToPath(new URL("..", import.meta.url));
const bin = (name: string) => join(pkgDir, "node_modules", ".bin", name);
const manifest = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));

function run(command: string, args: string[]) {
  return spawnSync(command, args, { cwd: pkgDir, encoding: "utf8", timeout: 120_000 });
}

beforeAll(() => {
  // The root `pnpm test` builds first; a lone vitest run builds here so the suite stands alone.
  if (!existsSync(join(pkgDir, "dist", "web.js"))) {
    const build = run(bin("tsup"), []);
    if (build.status !== 0) throw new Error(`tsup failed:\n${build.stdout}\n${build.stderr}`);
  }
}, 120_000);

/** Every module specifier a built file reaches, following its relative imports (chunks). */
function externalImports(entry: string): { files: number; external: string[] } {
  const seen = new Set<string>();
  const external: string[] = [];
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const code = readFileSync(file, "utf8");
    for (const m of code.matchAll(/(?:from\s*|import\s*\(?\s*|require\s*\(\s*)["']([^"']+)["']/g)) {
      const spec = m[1] as string;
      if (spec.startsWith(".")) visit(join(dirname(file), spec));
      else external.push(spec);
    }
  };
  visit(join(pkgDir, "dist", entry));
  return { files: seen.size, external: [...new Set(external)].sort() };
}

describe("package", () => {
  it("depends at runtime on openapi-fetch and undici only", () => {
    expect(Object.keys(manifest.dependencies ?? {}).sort()).toEqual(["openapi-fetch", "undici"]);
  });

  it("passes publint --strict", () => {
    const result = run(bin("publint"), ["--strict"]);
    expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
  }, 120_000);

  it("passes attw --pack for node16 (CJS and ESM) and bundlers", () => {
    const result = run(bin("attw"), ["--pack", ".", "--format", "json", "--profile", "node16"]);
    const start = result.stdout.indexOf("{");
    expect(start, `${result.stdout}\n${result.stderr}`).toBeGreaterThanOrEqual(0);
    const report = JSON.parse(result.stdout.slice(start)) as {
      analysis: { problems?: { kind: string; resolutionKind?: string }[] };
    };
    expect((report.analysis.problems ?? []).filter((p) => p.resolutionKind !== "node10")).toEqual([]);
  }, 120_000);

  it.each(["web.js", "web.cjs"])("%s imports only openapi-fetch, even through chunks", (entry) => {
    const { files, external } = externalImports(entry);
    expect(files).toBeGreaterThan(1);
    expect(external).toEqual(["openapi-fetch"]);
  });

  it("browsers, workers, Deno and edge runtimes resolve the package to the web entry", () => {
    const root = manifest.exports["."];
    for (const condition of ["browser", "worker", "workerd", "edge-light", "deno"]) {
      expect(root[condition]).toEqual(manifest.exports["./web"]);
    }
  });

  it.each(["module", "commonjs"])(
    "loads through the exports map as %s, one error class across entries",
    (type) => {
      const load = type === "module" ? "await import" : "require";
      const script = `
      const main = ${load}("${manifest.name}");
      const web = ${load}("${manifest.name}/web");
      const deskline = new main.Deskline({ apiKey: "dk_x", baseUrl: "http://127.0.0.1:1" });
      console.log(JSON.stringify({
        version: main.VERSION,
        namespaces: Object.keys(deskline).sort(),
        sameErrors: main.DesklineError === web.DesklineError && main.NotFoundError === web.NotFoundError,
        raw: typeof web.createDesklineClient({ apiKey: "dk_x", baseUrl: "http://127.0.0.1:1" }).GET,
      }));
    `;
      const wrapped = type === "module" ? script : `(async () => { ${script} })()`;
      const result = run(process.execPath, ["--input-type", type, "-e", wrapped]);
      expect(result.status, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual({
        version: manifest.version,
        namespaces: ["contacts", "conversations", "events", "raw", "tickets", "webhookEndpoints"],
        sameErrors: true,
        raw: "function",
      });
    },
  );
});
