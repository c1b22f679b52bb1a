// Renders docs/operations.md's table of settings from their declarations (src/config.ts and the
// capabilities' settings modules it composes), between the doc's `configuration` markers; the
// prose around it stays as written. `pnpm generate` at the workspace root runs this; `--check`
// exits 1 when the committed table is stale, and test/operations-guide.test.ts runs the same check.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { writeGenerated } from "../../../scripts/write-generated.js";
import { settings } from "../src/config.js";
import type { DocumentedVariable } from "../src/platform/settings.js";

export const COMMAND = "pnpm generate";
export const OPERATIONS_DOC = fileURLToPath(new URL("../../../docs/operations.md", import.meta.url));

const START = /<!-- configuration:start[^>]*-->\n/;
const END = "<!-- configuration:end -->";

/** A table cell: a `|` inside would end it early. */
const cell = (markdown: string) => markdown.replaceAll("|", "\\|");

function table(variables: DocumentedVariable[]): string {
  const rows = variables.map(
    (variable) =>
      `| \`${variable.env}\` | ${cell(variable.default)} | ${cell(variable.accepts)} | ${cell(variable.doc)} |`,
  );
  return ["| variable | default | accepts | meaning |", "|---|---|---|---|", ...rows, ""].join("\n");
}

/** docs/operations.md with the settings table between its markers rendered from the declarations. */
export function renderOperationsDoc(doc = readFileSync(OPERATIONS_DOC, "utf8")): string {
  const start = doc.match(START);
  const end = doc.indexOf(END);
  if (!start || start.index === undefined || end < start.index) {
    throw new Error("docs/operations.md needs the configuration:start and configuration:end markers");
  }
  const after = start.index + start[0].length;
  return doc.slice(0, after) + table(settings.variables) + doc.slice(end);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeGenerated(new Map([[OPERATIONS_DOC, renderOperationsDoc()]]), COMMAND);
}
