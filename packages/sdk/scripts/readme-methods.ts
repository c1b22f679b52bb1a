// Renders the README's table of methods from the SDK's source (src/deskline.ts, src/resources.ts),
// so a method added to a namespace is in the table the moment it exists: one row per namespace,
// each method with its arguments and the first sentence of its doc comment. Written between the
// README's `methods` markers by `pnpm generate`; test/readme-methods.test.ts fails while it is stale.
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const SRC = new URL("../src/", import.meta.url);
const README = new URL("../README.md", import.meta.url);
const START =
  "<!-- methods: generated from src/resources.ts by scripts/readme-methods.ts (pnpm generate) -->";
const END = "<!-- /methods -->";

/** The arguments each builder's method takes (see `Resource` in resources.ts). */
const ARGUMENTS: Record<string, string> = {
  lister: "query?",
  nestedLister: "id, query?",
  reader: "",
  byId: "id",
  creator: "body",
  nestedCreator: "id, body",
  action: "id, body?",
  bodilessAction: "id",
  updater: "id, body",
  puller: "query",
  recoverer: "id, body?",
  recoveryPreviewer: "id, body?",
  optionalCreator: "body?",
  searcher: "body?",
};

/** Where a builder's doc comment is its operation's (generated) and says too little of the method. */
const SUMMARIES: Record<string, string> = {
  recoveryPreviewer: "the dry run of `recover`: what it would queue, counted by reason; nothing is queued",
};

interface Method {
  name: string;
  text: string;
}

function sourceOf(file: string): ts.SourceFile {
  const path = fileURLToPath(new URL(file, SRC));
  return ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
}

/** The first sentence of a member's doc comment, if it has one. */
function summaryOf(node: ts.Node): string | undefined {
  const doc = ts.getJSDocCommentsAndTags(node).find(ts.isJSDoc);
  const comment = typeof doc?.comment === "string" ? doc.comment : ts.getTextOfJSDocComment(doc?.comment);
  const first = comment
    ?.split(/\n\s*\n/)[0]
    ?.replace(/\s+/g, " ")
    .trim();
  return first?.replace(/\.$/, "");
}

/** A class's public methods, in source order: builder members, aliases and async methods. */
function methodsOf(cls: ts.ClassDeclaration): { methods: Method[]; nested: Map<string, string> } {
  const methods: Method[] = [];
  const nested = new Map<string, string>();
  for (const member of cls.members) {
    const modifiers = ts.canHaveModifiers(member) ? (ts.getModifiers(member) ?? []) : [];
    if (
      modifiers.some(
        (m) => m.kind === ts.SyntaxKind.ProtectedKeyword || m.kind === ts.SyntaxKind.PrivateKeyword,
      )
    )
      continue;
    if (!member.name || !ts.isIdentifier(member.name)) continue;
    const name = member.name.text;
    if (ts.isPropertyDeclaration(member) && member.initializer) {
      const init = member.initializer;
      if (ts.isNewExpression(init) && ts.isIdentifier(init.expression))
        nested.set(name, init.expression.text);
      else if (ts.isCallExpression(init) && ts.isPropertyAccessExpression(init.expression)) {
        const args = ARGUMENTS[init.expression.name.text];
        if (args === undefined)
          throw new Error(`readme-methods: no arguments known for builder ${init.expression.name.text}`);
        const summary = SUMMARIES[init.expression.name.text] ?? summaryOf(member);
        methods.push({ name, text: describe(`${name}(${args})`, summary) });
      } else if (ts.isPropertyAccessExpression(init)) {
        methods.push({ name, text: describe(name, `the same as \`${init.name.text}\``) });
      }
    } else if (ts.isMethodDeclaration(member)) {
      const params = member.parameters.map(
        (p) => `${p.name.getText()}${p.questionToken || p.initializer ? "?" : ""}`,
      );
      methods.push({ name, text: describe(`${name}(${params.join(", ")})`, summaryOf(member)) });
    }
  }
  return { methods, nested };
}

const describe = (signature: string, summary: string | undefined) =>
  summary ? `\`${signature}\`: ${summary}` : `\`${signature}\``;

/** The namespaces of `Deskline`, in its order, with the classes behind them. */
function namespaces(): [string, string][] {
  const file = sourceOf("deskline.ts");
  const out: [string, string][] = [];
  file.forEachChild(function visit(node) {
    if (ts.isPropertyDeclaration(node) && node.type && ts.isTypeReferenceNode(node.type)) {
      const type = node.type.typeName.getText();
      if (ts.isIdentifier(node.name) && type !== "DesklineClient") out.push([node.name.text, type]);
    }
    node.forEachChild(visit);
  });
  return out;
}

/** The README's table, as generated. */
export function renderMethodsTable(): string {
  const classes = new Map<string, ts.ClassDeclaration>();
  sourceOf("resources.ts").forEachChild((node) => {
    if (ts.isClassDeclaration(node) && node.name) classes.set(node.name.text, node);
  });
  const rows: string[] = ["| namespace | methods |", "|---|---|"];
  const add = (path: string, className: string) => {
    const cls = classes.get(className);
    if (!cls) throw new Error(`readme-methods: no class ${className} in resources.ts`);
    const { methods, nested } = methodsOf(cls);
    rows.push(`| \`${path}\` | ${methods.map((m) => m.text).join("; ")} |`);
    for (const [name, inner] of nested) add(`${path}.${name}`, inner);
  };
  for (const [name, className] of namespaces()) add(name, className);
  return [START, ...rows, END].join("\n");
}

/** The README with its table rendered anew. */
export function renderReadme(): string {
  const text = readFileSync(README, "utf8");
  const [start, end] = [text.indexOf(START), text.indexOf(END)];
  if (start < 0 || end < start) throw new Error(`README.md: no methods markers (${START} … ${END})`);
  return `${text.slice(0, start)}${renderMethodsTable()}${text.slice(end + END.length)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(README, renderReadme());
  console.log(`wrote ${fileURLToPath(README)}`);
}
