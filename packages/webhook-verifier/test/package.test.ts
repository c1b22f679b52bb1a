// The package as users install it: lint the manifest and types (publint, attw --pack), and load
// the built files through the exports map.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { NOW, payloadText, vectors } from "./vectors.js";

const pkgDir = fileURLToPath(new URL("..", import.meta.url));
const bin = (name: string) => join(pkgDir, "node_modules", ".bin", name);
const manifest = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
const subpaths = ["", "/web", "/koa", "/node", "/fetch"];

function run(command: string, args: string[]) {
  return spawnSync(command, args, { cwd: pkgDir, encoding: "utf8", timeout: 120_000 });
}

beforeAll(() => {
  // The root `pnpm test` builds first; a lone vitest run builds here so the suite stands alone.
  if (!existsSync(join(pkgDir, "dist", "index.js"))) {
    const build = run(bin("tsup"), []);
    if (build.status !== 0) throw new Error(`tsup failed:\n${build.stdout}\n${build.stderr}`);
  }
}, 120_000);

describe("package", () => {
  it("has zero runtime dependencies", () => {
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(manifest.peerDependencies ?? {}).toEqual({});
    expect(manifest.optionalDependencies ?? {}).toEqual({});
  });

  it("passes publint --strict", () => {
    const result = run(bin("publint"), ["--strict"]);
    expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
  }, 120_000);

  it("passes attw --pack for node16 (CJS and ESM) and bundlers", () => {
    // node10 resolution ignores `exports`, so subpaths cannot resolve there: that is the profile's
    // point, not a problem of this package.
    const result = run(bin("attw"), ["--pack", ".", "--format", "json", "--profile", "node16"]);
    const start = result.stdout.indexOf("{");
    expect(start, `${result.stdout}\n${result.stderr}`).toBeGreaterThanOrEqual(0);
    const report = JSON.parse(result.stdout.slice(start)) as {
      analysis: { problems?: { kind: string; resolutionKind?: string; entrypoint?: string }[] };
    };
    const problems = (report.analysis.problems ?? []).filter((p) => p.resolutionKind !== "node10");
    expect(problems).toEqual([]);
    // Every subpath was analysed, so an entry missing from `exports` cannot pass unnoticed.
    expect(Object.keys(manifest.exports).sort()).toEqual(
      [".", "./package.json", ...subpaths.slice(1).map((s) => `.${s}`)].sort(),
    );
  }, 120_000);

  it.each(["web.js", "web.cjs", "fetch.js", "fetch.cjs"])(
    "%s imports nothing from node, even through chunks",
    (entry) => {
      const seen = new Set<string>();
      const builtins: string[] = [];
      const visit = (file: string) => {
        if (seen.has(file)) return;
        seen.add(file);
        const code = readFileSync(file, "utf8");
        for (const m of code.matchAll(/(?:from\s*|import\s*\(?\s*|require\s*\(\s*)["']([^"']+)["']/g)) {
          const spec = m[1] as string;
          if (spec.startsWith(".")) visit(join(dirname(file), spec));
          else builtins.push(spec);
        }
      };
      visit(join(pkgDir, "dist", entry));
      expect(seen.size).toBeGreaterThan(1);
      expect(builtins).toEqual([]);
    },
  );

  const valid = vectors.find((v) => v.name === "valid");
  if (!valid || valid.header === null) throw new Error("no valid vector");
  const body = payloadText(valid.payload);

  it.each(["module", "commonjs"])(
    "loads through the exports map as %s, with one error class across subpaths",
    (type) => {
      // A separate node process resolves the package by name (self-reference), as a user would.
      const load = type === "module" ? "await import" : "require";
      const script = `
        const main = ${load}("${manifest.name}");
        const web = ${load}("${manifest.name}/web");
        const args = [${JSON.stringify(body)}, ${JSON.stringify(valid.header)}, ${JSON.stringify(valid.secret)}, { now: ${NOW} }];
        const out = { sync: main.verifySignature(...args), async: await web.verifySignatureAsync(...args) };
        out.sameClass = web.WebhookVerificationError === main.WebhookVerificationError;
        out.subpaths = [];
        for (const sub of ["/koa", "/node", "/fetch"]) out.subpaths.push(Object.keys(${load}("${manifest.name}" + sub)));
        console.log(JSON.stringify(out));
      `;
      const wrapped = type === "module" ? script : `(async () => { ${script} })()`;
      const result = run(process.execPath, ["--input-type", type, "-e", wrapped]);
      expect(result.status, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual({
        sync: NOW,
        async: NOW,
        sameClass: true,
        subpaths: [["koaWebhookMiddleware"], ["nodeWebhookMiddleware"], ["withWebhookVerification"]],
      });
    },
  );
});
