// Renders the doc comments of the SDK's resource methods (packages/sdk/src/resources.ts) from
// openapi.yaml, so the SDK never restates an operation in its own words: each member built from a
// spec path (`get = this.byId("get", "/open/v1/contacts/{id}")`) gets that operation's `summary`
// and `description`, then its method, path and `operationId`. The rest of the file is written by
// hand, and so are the comments of members that name no operation (`pull`, `waitForRecovery`).
// generate.ts writes it with the other generated files, and its staleness test checks it.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";

const SPEC = new URL("../openapi.yaml", import.meta.url);
const RESOURCES = new URL("../../packages/sdk/src/resources.ts", import.meta.url);

interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
}

/** The HTTP method each builder of `Resource` calls; `byId` names its own. */
const BUILDER_METHODS: Record<string, string | undefined> = {
  lister: "get",
  nestedLister: "get",
  reader: "get",
  byId: undefined,
  creator: "post",
  optionalCreator: "post",
  nestedCreator: "post",
  action: "post",
  bodilessAction: "post",
  updater: "patch",
  recoverer: "post",
  recoveryPreviewer: "post",
  searcher: "post",
};

/** What a builder adds to its operation's description (a list: how its pages are walked, paginate.ts). */
const NOTES: Record<string, string> = {
  lister: "Await it for the first page, or `for await` over it for every item, page after page.",
  nestedLister: "Await it for the first page, or `for await` over it for every item, page after page.",
  searcher:
    "Await it for the first page, or `for await` over it for every result, page after page (`next_cursor` sent for you).",
  recoverer: "Starts the recovery; `previewRecovery` is the dry run.",
  recoveryPreviewer: "The dry run (`dry_run: true`, sent for you): the preview, and nothing queued.",
};

/** A call of a builder in a member's statement: `this.byId("get", "/open/v1/…")`. */
const BUILDER_CALL = /this\.(\w+)\((?:"(get|delete)",\s*)?"(\/[^"]+)"\)/;
/** The first line of a class member: two spaces of indentation, then its name and `=` or `:`. */
const MEMBER = /^ {2}(?:readonly )?#?\w+\s*[=:]/;

/** resources.ts with the doc comment of every member built from a spec path rendered anew. */
export function renderSdkDocs(): Map<string, string> {
  const spec = parse(readFileSync(SPEC, "utf8")) as { paths: Record<string, Record<string, Operation>> };
  const lines = readFileSync(RESOURCES, "utf8").split("\n");
  const out: string[] = [];
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] as string;
    const call = MEMBER.test(line) ? BUILDER_CALL.exec(statementAt(lines, index)) : null;
    if (call === null) {
      out.push(line);
      continue;
    }
    const [, builder = "", explicit, path = ""] = call;
    if (!(builder in BUILDER_METHODS)) {
      out.push(line);
      continue;
    }
    const method = explicit ?? BUILDER_METHODS[builder] ?? "";
    const operation = spec.paths[path]?.[method];
    if (!operation?.operationId) throw new Error(`resources.ts: no operation ${method} ${path} in the spec`);
    dropDocComment(out);
    const note = NOTES[builder];
    out.push(...docComment(operation, method, path, note), line);
  }
  return new Map([[fileURLToPath(RESOURCES), out.join("\n")]]);
}

/** The member statement that starts at `index`: its lines up to the one ending with `;`. */
function statementAt(lines: readonly string[], index: number): string {
  let end = index;
  while (end < lines.length - 1 && !(lines[end] as string).trimEnd().endsWith(";")) end++;
  return lines.slice(index, end + 1).join("\n");
}

/** Removes the doc comment that ends the lines written so far, if one does. */
function dropDocComment(out: string[]): void {
  if (!out.at(-1)?.trim().endsWith("*/")) return;
  let start = out.length - 1;
  while (start > 0 && !(out[start] as string).trim().startsWith("/**")) start--;
  out.length = start;
}

function docComment(operation: Operation, method: string, path: string, note: string | undefined): string[] {
  const body = [
    `${operation.summary ?? operation.operationId}.`,
    ...(operation.description ? ["", ...operation.description.trimEnd().split("\n")] : []),
    ...(note ? ["", note] : []),
    "",
    `\`${method.toUpperCase()} ${path}\` (\`${operation.operationId}\`).`,
  ];
  // A `*/` in the spec's prose would end the comment early.
  return ["  /**", ...body.map((text) => `   *${text ? ` ${text.replaceAll("*/", "*\\/")}` : ""}`), "   */"];
}
