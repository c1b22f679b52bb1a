// The webhooks' rooms as docs/development.md ("Layout of the server") names them: every file under
// apps/server/src/webhooks is named in the doc's entry for its folder, no entry names a file that
// is not there, and no folder grows past what a reader takes in at once.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, posix } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");
const WEBHOOKS = "apps/server/src/webhooks";
const MAX_FILES = 15;

/** Each folder under webhooks/ (itself included, as `webhooks/`) with the names of its files, no extension. */
function tree(): Map<string, string[]> {
  const folders = new Map<string, string[]>();
  const walk = (rel: string) => {
    const names: string[] = [];
    for (const entry of readdirSync(join(ROOT, WEBHOOKS, rel), { withFileTypes: true })) {
      if (entry.isDirectory()) walk(posix.join(rel, entry.name));
      else names.push(entry.name.replace(/\.ts$/, ""));
    }
    folders.set(rel ? `webhooks/${rel}/` : "webhooks/", names.sort());
  };
  walk("");
  return folders;
}

/**
 * The doc's layout block: a line `  webhooks/…/   a, b (why), c` opens a folder's entry, deeper
 * indented lines go on with it. Once the parenthesised asides are gone, the names are the
 * one-word parts between commas; a part of several words ("the worker:") is a label.
 */
function documented(): Map<string, string[]> {
  const doc = readFileSync(join(ROOT, "docs/development.md"), "utf8");
  const start = doc.indexOf("**Layout of the server**");
  const block = doc.slice(doc.indexOf("```", start) + 3, doc.indexOf("```", doc.indexOf("```", start) + 3));
  const entries = new Map<string, string>();
  let current: string | undefined;
  for (const line of block.split("\n")) {
    const opens = /^ {2}(\S+\/)\s+(.*)$/.exec(line);
    if (opens) {
      current = opens[1]?.startsWith("webhooks/") ? opens[1] : undefined;
      if (current) entries.set(current, opens[2] as string);
    } else if (current && /^ {3,}\S/.test(line)) {
      entries.set(current, `${entries.get(current)} ${line.trim()}`);
    }
  }
  const names = new Map<string, string[]>();
  for (const [folder, text] of entries) {
    let plain = text;
    while (/\([^()]*\)/.test(plain)) plain = plain.replace(/\([^()]*\)/g, "");
    const listed = plain
      .split(/[,;:]/)
      .map((part) => part.trim())
      .filter((part) => /^[\w.-]+$/.test(part));
    names.set(folder, listed.sort());
  }
  return names;
}

describe("the webhooks' layout", () => {
  it("docs/development.md names every file of every webhooks folder, and no missing one", () => {
    const onDisk = tree();
    const inDoc = documented();
    const problems: string[] = [];
    for (const [folder, files] of onDisk) {
      const named = inDoc.get(folder);
      if (!named) {
        problems.push(`${folder}: no entry in docs/development.md`);
        continue;
      }
      for (const file of files)
        if (!named.includes(file)) problems.push(`${folder}${file}.ts: not named in the doc`);
      for (const name of named)
        if (!files.includes(name)) problems.push(`${folder}${name}: named in the doc, no such file`);
    }
    for (const folder of inDoc.keys())
      if (!onDisk.has(folder)) problems.push(`${folder}: named in the doc, no such folder`);
    expect(problems).toEqual([]);
  });

  it(`no webhooks folder holds more than ${MAX_FILES} files`, () => {
    const crowded = [...tree()]
      .filter(([, files]) => files.length > MAX_FILES)
      .map(([folder, files]) => `${folder}: ${files.length} files`);
    expect(crowded).toEqual([]);
  });
});
