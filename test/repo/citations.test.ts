// Comments and docs name only what the repository holds: no tracked file cites a document kept
// elsewhere (the original design brief, the contract's source, an issue by number), a repository
// path that does not exist, or a heading of docs/*.md that does not exist. The rules are in
// docs/design.md's opening; this reads every file `git ls-files` lists, so a new file is covered.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, posix } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");
const SELF = "test/repo/citations.test.ts";

/** Files whose text is not ours to point with: release notes quote history, the lockfile is pnpm's. */
function exempt(path: string): boolean {
  return (
    path === SELF ||
    path === "pnpm-lock.yaml" ||
    /(^|\/)CHANGELOG\.md$/.test(path) ||
    (path.startsWith(".changeset/") && path !== ".changeset/README.md")
  );
}

/** Citations of what lives outside the repository. `§` is fine only after an RFC's number. */
const OUTSIDE: { name: string; pattern: RegExp }[] = [
  { name: "the design brief", pattern: /\bDESIGN(\.md)?\b(?!\w)/ },
  { name: "the seed", pattern: /\bseed\s*§|seed\/open-api|\bseed \d+\.\d+/i },
  { name: "the steering repository", pattern: /\.\.\/shared\b/ },
  { name: "an issue number", pattern: /\bissues?\s+#?\d+/i },
  { name: "a section sign", pattern: /(?<!\bRFC \d+ )§/ },
];

// A path with at least one folder and a source or doc extension, not inside a URL or a glob.
const PATH = /(?<![\w./:@*$}-])((?:[\w-]+\/)+[\w.-]+\.(?:ts|md|yaml|yml|sh|java|py))(?![\w/])/g;

interface Headings {
  /** Heading texts and the bold leads of bullets, lower case. */
  titles: string[];
  /** GitHub's anchors of the headings. */
  anchors: Set<string>;
}

function headingsOf(text: string): Headings {
  const titles: string[] = [];
  const anchors = new Set<string>();
  for (const line of text.split("\n")) {
    const heading = /^#{1,6}\s+(.*)$/.exec(line);
    if (heading?.[1]) {
      const title = heading[1].trim();
      titles.push(title.toLowerCase());
      anchors.add(
        title
          .toLowerCase()
          .replace(/[^\p{L}\p{N}\s_-]/gu, "")
          .replace(/\s/g, "-"),
      );
    }
    const lead = /^\s*[-*]\s+\*\*(.+?)\*\*/.exec(line);
    if (lead?.[1]) titles.push(lead[1].toLowerCase());
  }
  return { titles, anchors };
}

interface Repo {
  /** Tracked paths. */
  files: Set<string>;
  /** Every folder name that occurs in a tracked path. */
  folders: Set<string>;
  /** The headings of a tracked markdown file, or undefined when there is no such file. */
  headings(path: string): Headings | undefined;
}

/**
 * Whether a path written in `from` names a tracked file: from the root, the file's folder, or as
 * the tail of one. A path whose first folder the repository has none of (`node_modules/…`, a
 * receiver's `app/api/…` in an example) is not ours and passes.
 */
function resolves(repo: Repo, from: string, ref: string): boolean {
  const clean = ref.replace(/^\.\//, "");
  if (!repo.folders.has(clean.split("/")[0] as string)) return true;
  if (repo.files.has(clean)) return true;
  if (repo.files.has(posix.normalize(posix.join(posix.dirname(from), ref)))) return true;
  for (const file of repo.files) if (file.endsWith(`/${clean}`)) return true;
  return false;
}

/** Comment leaders stripped and lines joined, so a pointer wrapped over two lines reads as one. */
function joined(text: string): string {
  return text
    .split("\n")
    .map((line) => line.replace(/^\s*(?:\/\/+|\*+|#+|<!--)?\s*/, ""))
    .join(" ");
}

/** Every problem of one file, as `path:line: what`, or `path: what` for a pointer. */
function problemsOf(repo: Repo, path: string, text: string): string[] {
  const problems: string[] = [];
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    for (const { name, pattern } of OUTSIDE) {
      if (pattern.test(line)) problems.push(`${path}:${i + 1}: cites ${name}: ${line.trim()}`);
    }
    for (const match of line.matchAll(PATH)) {
      const ref = match[1] as string;
      if (!resolves(repo, path, ref)) problems.push(`${path}:${i + 1}: names a missing file ${ref}`);
    }
  });

  const flat = joined(text);
  const pointers: { doc: string; title: string; bare?: boolean }[] = [];
  for (const m of flat.matchAll(/docs\/([\w-]+\.md)`?\)?,?\s+["“]([^"”]{2,100})["”]/g)) {
    pointers.push({ doc: `docs/${m[1]}`, title: m[2] as string });
  }
  for (const m of flat.matchAll(/["“]([^"”]{2,100})["”]\s+in\s+`?docs\/([\w-]+\.md)/g)) {
    pointers.push({ doc: `docs/${m[2]}`, title: m[1] as string });
  }
  // "docs/design.md, Database: …" names a section without quotes; the name ends at punctuation.
  for (const m of flat.matchAll(/docs\/design\.md,\s+([A-Z][A-Za-z ]*)/g)) {
    pointers.push({ doc: "docs/design.md", title: (m[1] as string).trim(), bare: true });
  }
  for (const { doc, title, bare } of pointers) {
    const headings = repo.headings(doc);
    const wanted = title.replace(/\s*(…|\.\.\.)$/, "").toLowerCase();
    const found = bare
      ? headings?.titles.some((t) => wanted === t || wanted.startsWith(`${t} `))
      : headings?.titles.some((t) => t.includes(wanted));
    if (!headings) problems.push(`${path}: points into a missing ${doc}`);
    else if (!found) {
      problems.push(`${path}: points at "${title}", not a heading of ${doc}`);
    }
  }
  for (const m of flat.matchAll(/\]\(([\w./-]*\.md)#([\w-]+)\)/g)) {
    const doc = posix.normalize(posix.join(posix.dirname(path), m[1] as string));
    const headings = repo.headings(doc);
    if (!headings) problems.push(`${path}: links to a missing ${doc}`);
    else if (!headings.anchors.has(m[2] as string)) {
      problems.push(`${path}: links to #${m[2]}, not an anchor of ${doc}`);
    }
  }
  return problems;
}

function repository(): Repo {
  const files = new Set(
    execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8" }).split("\0").filter(Boolean),
  );
  const folders = new Set([...files].flatMap((file) => file.split("/").slice(0, -1)));
  const cache = new Map<string, Headings | undefined>();
  return {
    files,
    folders,
    headings(path) {
      if (!cache.has(path)) {
        cache.set(path, files.has(path) ? headingsOf(readFileSync(join(ROOT, path), "utf8")) : undefined);
      }
      return cache.get(path);
    },
  };
}

describe("citations", () => {
  const repo = repository();

  it("no tracked file cites a document, section or path the repository does not hold", () => {
    const problems: string[] = [];
    for (const path of repo.files) {
      if (exempt(path) || !existsSync(join(ROOT, path))) continue;
      const bytes = readFileSync(join(ROOT, path));
      if (bytes.includes(0)) continue; // binary
      problems.push(...problemsOf(repo, path, bytes.toString("utf8")));
    }
    expect(problems).toEqual([]);
  });

  it("catches each kind of bad citation", () => {
    // Pieced together, so this file does not itself cite what it shows being caught.
    const bad = [
      `// The list envelope of ${"DESIGN"}.md §3.`,
      `/** ${"Seed"} §4.1: parse → call → shape. */`,
      "// see ../shared/CONTAINERS.md",
      `// Webhook recovery (${"issue"} 22): end to end`,
      "// Verify the header (Open API v1, §6.3)",
      "// the lane lives in delivery/agenda.ts",
      '// (docs/decisions.md, "No such heading")',
      "// (docs/design.md, Nowhere)",
      "See [the guide](docs/operations.md#no-such-anchor).",
    ];
    for (const line of bad) expect(problemsOf(repo, "apps/server/src/x.ts", line), line).not.toEqual([]);
    const good = [
      "// RFC 9110 §15.5.6 requires the header",
      '// (docs/decisions.md, "One record per delivery")',
      "// (docs/design.md, API conventions: 1 MiB)",
      "// a lane is in webhooks/delivery/lane.ts",
    ];
    for (const line of good) expect(problemsOf(repo, "apps/server/src/x.ts", line), line).toEqual([]);
  });
});
