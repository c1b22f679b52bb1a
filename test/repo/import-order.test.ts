// Imports run one way, down (docs/decisions.md, "Imports run one way, down: no circle, no arrow
// from a lower layer up"): the server's folders are layers, and the packages reach each other by
// name. This reads every relative import of the tracked TypeScript and JavaScript files.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join, posix } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");
const SERVER = "apps/server/src/";

/**
 * The server's layers, lowest first (docs/development.md, "Layout of the server"). A folder may
 * import its own files and those of lower layers; two folders of one layer import neither.
 * `migrations/` sits just above the platform: it upgrades stored shapes without the stores.
 */
const LAYERS: string[][] = [
  ["spec", "generated"],
  ["platform"],
  ["events", "migrations", "retention"],
  ["records"],
  ["workspaces", "docs"],
  ["tickets", "conversations", "webhooks", "console"],
  ["contacts"],
  ["(root)"],
];
/** What a migration may import, beyond its own folder: nothing of the stores that change after it. */
const MIGRATIONS_IMPORT = new Set(["platform"]);

/**
 * The rooms of `webhooks/`, lowest first (docs/development.md, "Layout of the server"): the
 * settings (over what the egress proxy's say) under everything, endpoints under the deliveries
 * queued to them, recovery over the deliveries it queues again, `stores` gathering the three, the
 * worker over all it runs, and `routes` mounting every room's routes. A room may import its own
 * files and those of lower rooms.
 */
const WEBHOOKS = `${SERVER}webhooks/`;
const WEBHOOK_ROOMS: string[][] = [
  ["egress-proxy.ts"],
  ["settings.ts"],
  ["endpoints"],
  ["deliveries"],
  ["recovery"],
  ["stores.ts"],
  ["delivery"],
  ["routes.ts"],
];
/** A file's room: its folder under webhooks/, or the file itself at the top (an import names `.js`). */
const roomOf = (path: string) =>
  (path.slice(WEBHOOKS.length).split("/")[0] as string).replace(/\.js$/, ".ts");
const roomLayerOf = (room: string) => WEBHOOK_ROOMS.findIndex((layer) => layer.includes(room));

/** The packages: each reaches another by its name, never by a path into its folder. */
const PACKAGES = ["apps/server", "apps/cli", "packages/sdk", "packages/webhook-verifier", "spec", "test/kit"];
/** `@deskline/test-kit`: the one way into the shared test harness from outside the server. */
const KIT = "test/kit/";

const tracked = execFileSync("git", ["ls-files", "*.ts", "*.mts", "*.mjs", "*.js"], {
  cwd: ROOT,
  encoding: "utf8",
})
  .split("\n")
  .filter((path) => path && !path.includes("/generated/") && !path.endsWith(".d.ts"));

/** Each relative import of `file`, as a repository path. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  const specifiers = [
    ...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^import\s+)["'](\.{1,2}\/[^"']+)["']/gm),
  ];
  return specifiers.map((match) => posix.normalize(posix.join(posix.dirname(file), match[1] as string)));
}

const folderOf = (path: string) => {
  const rest = path.slice(SERVER.length);
  return rest.includes("/") ? (rest.split("/")[0] as string) : "(root)";
};
const layerOf = (folder: string) => LAYERS.findIndex((layer) => layer.includes(folder));
const packageOf = (path: string) => PACKAGES.find((pkg) => path.startsWith(`${pkg}/`));

/**
 * Each import between two units under `prefix` (a folder, a room: what `unitOf` names a path by)
 * that `allowed` refuses, as `file → target`.
 */
function refusedImports(
  prefix: string,
  unitOf: (path: string) => string,
  allowed: (from: string, to: string) => boolean,
): string[] {
  const refused: string[] = [];
  for (const file of tracked.filter((path) => path.startsWith(prefix))) {
    const from = unitOf(file);
    for (const target of importsOf(file).filter((path) => path.startsWith(prefix))) {
      const to = unitOf(target);
      if (to !== from && !allowed(from, to)) refused.push(`${file} → ${target}`);
    }
  }
  return refused;
}

describe("import order", () => {
  it("the server's folders import down only", () => {
    const below = (from: string, to: string) =>
      from === "migrations" ? MIGRATIONS_IMPORT.has(to) : layerOf(to) >= 0 && layerOf(to) < layerOf(from);
    expect(refusedImports(SERVER, folderOf, below)).toEqual([]);
  });

  it("the rooms of webhooks/ import down only", () => {
    const below = (from: string, to: string) => roomLayerOf(to) >= 0 && roomLayerOf(to) < roomLayerOf(from);
    expect(refusedImports(WEBHOOKS, roomOf, below)).toEqual([]);
    const rooms = new Set(tracked.filter((path) => path.startsWith(WEBHOOKS)).map(roomOf));
    for (const room of rooms) expect(roomLayerOf(room), room).toBeGreaterThanOrEqual(0);
  });

  it("knows every folder of the server's source", () => {
    const folders = new Set(tracked.filter((path) => path.startsWith(SERVER)).map(folderOf));
    for (const folder of folders) expect(layerOf(folder), folder).toBeGreaterThanOrEqual(0);
  });

  it("packages reach each other by name: no source imports another package's files, nothing imports a benchmark of another", () => {
    const across: string[] = [];
    for (const file of tracked) {
      const from = packageOf(file);
      if (!from) continue;
      for (const target of importsOf(file)) {
        const to = packageOf(target);
        if (!to || to === from) continue;
        // Tests and benchmarks may drive the server through its test harness (by the test kit's
        // name, next test) and compare with its source; a package's own code may not, nor may
        // anything reach a benchmark of another package (a benchmark is a leaf).
        const inSource = file.startsWith(`${from}/src/`);
        const intoBench = target.startsWith(`${to}/bench/`);
        if (inSource || intoBench) across.push(`${file} → ${target}`);
      }
    }
    expect(across).toEqual([]);
  });

  it("the shared test harness is reached by the test kit's name: nothing outside the server imports its tests by path, no package the root's test/", () => {
    const byPath: string[] = [];
    for (const file of tracked.filter((path) => !path.startsWith("apps/server/") && !path.startsWith(KIT))) {
      for (const target of importsOf(file)) {
        const intoServerTests = target.startsWith("apps/server/test/");
        const intoRootTests =
          target.startsWith("test/") && (packageOf(file) !== undefined || target.startsWith(KIT));
        if (intoServerTests || intoRootTests) byPath.push(`${file} → ${target}`);
      }
    }
    expect(byPath).toEqual([]);
  });
});
