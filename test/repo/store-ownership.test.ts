// Stores own their collections (docs/development.md, "Layout of the server"): a collection is read
// and written through the store that owns it, whose constructor names it, so its queries, indexes
// and invariants live in one file. This reads the server's tracked TypeScript for the two ways
// around a store: reading another object's `.collection`, and naming a collection directly.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");

/** Files that go around the stores on purpose, each with why. */
const ALLOWED: Record<string, string> = {
  "apps/server/src/platform/database/migrations.ts":
    "the migration runner keeps its own records and lock, and creates or drops the indexes a migration names",
  "apps/server/src/migrations/":
    "a migration rewrites the shapes stored before it, by name, without today's stores",
  "apps/server/src/events/outbox-relay.ts":
    "the relay moves pending events out of whichever collection's documents carry them, named by the capability that registers it",
  "apps/server/src/webhooks/delivery/wake.ts":
    "a change stream on the deliveries' inserts, and the probe that tells whether the deployment has change streams",
  "apps/server/src/webhooks/endpoints/reseal.ts":
    "re-sealing every stored secret under a new key (`reencrypt-secrets`, the start-up check) walks the endpoints and the stored answers as stored, each write fenced by the sealed value it read",
};

const allowed = (path: string) => Object.keys(ALLOWED).some((prefix) => path.startsWith(prefix));

const files = execFileSync("git", ["ls-files", "apps/server/src/**/*.ts"], { cwd: ROOT, encoding: "utf8" })
  .split("\n")
  .filter((path) => path && !path.includes("/generated/"));

/** A line without its string literals and its `//` comment, so a name inside them counts for nothing. */
const code = (line: string) =>
  line
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`/g, '""')
    .replace(/\/\/.*$/, "")
    .replace(/^\s*\*.*$/, "");

/** Where `path` goes around a store: `path:line: what`. */
function bypasses(path: string): string[] {
  const found: string[] = [];
  readFileSync(join(ROOT, path), "utf8")
    .split("\n")
    .forEach((raw, index) => {
      const line = code(raw);
      const where = `${path}:${index + 1}`;
      // A store names its collection once, in its constructor: `this.collection = db.collection(…)`.
      if (/\bdb\.collection\s*[<(]/.test(line) && !/this\.\w+\s*=\s*db\.collection/.test(line)) {
        found.push(`${where}: names a collection directly`);
      }
      for (const match of line.matchAll(/(\w+)\s*\.\s*collection\b(?!\s*[<(])/g)) {
        if (match[1] !== "this") found.push(`${where}: reads ${match[1]}.collection`);
      }
    });
  return found;
}

describe("stores own their collections", () => {
  it("no server file reads another store's collection or names one directly, but those allowed", () => {
    expect(files.length).toBeGreaterThan(50);
    expect(files.filter((path) => !allowed(path)).flatMap(bypasses)).toEqual([]);
  });

  it("every allowed file still goes around a store (else it comes off the list)", () => {
    for (const prefix of Object.keys(ALLOWED)) {
      const matching = files.filter((path) => path.startsWith(prefix));
      expect(matching.flatMap(bypasses), prefix).not.toEqual([]);
    }
  });

  it("catches both ways around a store", () => {
    const check = (line: string) => [
      /\bdb\.collection\s*[<(]/.test(code(line)) && !/this\.\w+\s*=\s*db\.collection/.test(code(line)),
      [...code(line).matchAll(/(\w+)\s*\.\s*collection\b(?!\s*[<(])/g)].some((m) => m[1] !== "this"),
    ];
    expect(check('const docs = db.collection("webhook_deliveries").find({});')).toEqual([true, false]);
    expect(check("await store.events.collection.find(filter);")).toEqual([false, true]);
    expect(check('this.collection = db.collection<Doc>("contacts");')).toEqual([false, false]);
    expect(check('span.setAttribute("db.collection.name", name); // db.collection(')).toEqual([false, false]);
  });
});
