// The shell examples of the README and of the docs pages as scripts, so the end-to-end project runs
// what a reader copies: a page that no longer works fails the tests. The rules (also in
// docs/development.md, "How it is built"), the same for every page:
// - a section is a `## ` heading with what follows up to the next one (its `### ` parts included),
//   and its fenced `sh`/`bash` blocks run in order, in one bash session;
// - a block right after an `<!-- e2e: skip (why) -->` comment is not run (it installs, starts
//   servers, or shows placeholders); the reason is required;
// - inside a block, two kinds of line are dropped: starting the server in the background
//   (`pnpm start &`), and setting only the variables the test provides (B, PORT, ADMIN_TOKEN);
// - `js` blocks are collected too (the tests import-run the receivers), under the same skip rule.

export interface ShellBlock {
  /** 1-based line of the block's first line of code in its page. */
  line: number;
  code: string;
}

export interface SkippedBlock extends ShellBlock {
  reason: string;
}

export interface ReadmeSection {
  title: string;
  blocks: ShellBlock[];
  skipped: SkippedBlock[];
  /** The section's `js` blocks, each a module. */
  modules: ShellBlock[];
}

const SKIP_MARKER = /^<!--\s*e2e:\s*skip\s*\((.+)\)\s*-->$/;
const FENCE = /^(\s*)```(\S*)\s*$/;
const SHELL = new Set(["sh", "bash"]);
const DROPPED_LINES = [/^pnpm start &/, /^(export\s+)?((B|PORT|ADMIN_TOKEN)=\S+\s*)+$/];

/** `page` (e.g. `docs/cli.md`) names the file in errors and in the scripts' markers. */
export function readmeSections(markdown: string, page = "README.md"): ReadmeSection[] {
  const lines = markdown.split("\n");
  const sections: ReadmeSection[] = [];
  let section: ReadmeSection | undefined;
  let lastText = "";
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i] as string;
    if (text.startsWith("## ")) {
      section = { title: text.slice(3).trim(), blocks: [], skipped: [], modules: [] };
      sections.push(section);
      lastText = "";
      continue;
    }
    const fence = FENCE.exec(text);
    if (!fence) {
      if (text.trim() !== "") lastText = text.trim();
      continue;
    }
    const indent = fence[1]?.length ?? 0;
    const body: string[] = [];
    const start = i + 2;
    for (i++; i < lines.length && !FENCE.test(lines[i] as string); i++)
      body.push((lines[i] as string).slice(indent));
    const skip = SKIP_MARKER.exec(lastText);
    if (lastText.startsWith("<!-- e2e") && !skip)
      throw new Error(`${page}:${start - 2}: a skip marker needs its reason`);
    lastText = "";
    const language = fence[2] ?? "";
    if (!section || !(SHELL.has(language) || language === "js")) continue;
    const block = { line: start, code: body.join("\n") };
    if (skip) section.skipped.push({ ...block, reason: skip[1] as string });
    else if (language === "js") section.modules.push(block);
    else section.blocks.push(block);
  }
  return sections;
}

/** One section as a bash script: strict mode, then each block after a marker naming its page and line. */
export function sectionScript(section: ReadmeSection, page = "README.md"): string {
  const parts = ["set -euo pipefail"];
  for (const block of section.blocks) {
    const kept = block.code.split("\n").filter((line) => !DROPPED_LINES.some((p) => p.test(line.trim())));
    parts.push(`echo "== ${page}:${block.line}" >&2`, ...kept);
  }
  return `${parts.join("\n")}\n`;
}
