// The package as users install it (publint and attw run as the release runs them, in
// test/e2e/packages-publish.test.ts): load the built files through the exports map, and
// typecheck a project that has only the packed tarball.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { builtPackage, itLoadsAs } from "@deskline/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NOW, payloadText, vectors } from "./vectors.js";

const pkg = builtPackage(fileURLToPath(new URL("..", import.meta.url)));
const { manifest } = pkg;
const subpaths = ["", "/web", "/koa", "/node", "/express", "/fetch", "/fastify"];

beforeAll(() => pkg.ensureBuilt("index.js"), 120_000);
afterAll(() => pkg.dispose());

// The checks read the built files and one packed tarball, and change nothing: side by side,
// within each block and across the two.
describe.concurrent("package manifest and exports", () => {
  it("has zero runtime dependencies; fastify is only an optional peer, for /fastify's types", () => {
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(manifest.optionalDependencies ?? {}).toEqual({});
    expect(manifest.peerDependencies ?? {}).toEqual({ fastify: expect.any(String) });
    expect(manifest.peerDependenciesMeta).toEqual({ fastify: { optional: true } });
  });

  it.each(["fastify.js", "fastify.cjs"])("%s loads nothing of fastify at run time", (entry) => {
    const { external } = pkg.imports(entry);
    expect(external.filter((name: string) => name.startsWith("fastify"))).toEqual([]);
  });

  it("exports every subpath, so attw analyses each and an entry missing from `exports` cannot pass unnoticed", () => {
    expect(Object.keys(manifest.exports).sort()).toEqual(
      [".", "./package.json", ...subpaths.slice(1).map((s) => `.${s}`)].sort(),
    );
  });
});

describe.concurrent("package, as installed", () => {
  // One project, one tsc (each costs some 10 s of CPU): the package's own uses, and the Express
  // example of docs/webhooks.md under strict.
  it("its packed tarball typechecks alone (the spec's types are inlined in its declarations), with docs/webhooks.md's Express example", async () => {
    // The @ts-expect-error lines hold only while the event shapes are really there (not `any`).
    const uses = (from: string) => `
      import { type ContactUpdatedEvent, constructEvent, type DesklineEvent } from "${from}";
      import { withWebhookVerification } from "${from}/fetch";
      import { nodeWebhookMiddleware } from "${from}/node";
      import { verifySignatureAsync } from "${from}/web";
      export function previousName(payload: string, header: string, secret: string): string | undefined {
        const event: DesklineEvent = constructEvent(payload, header, secret);
        return event.type === "contact.updated" ? event.previous_attributes.name : undefined;
      }
      // @ts-expect-error a contact's name is a string
      export const wrong: ContactUpdatedEvent["data"]["name"] = 1;
      export const uses = [withWebhookVerification, nodeWebhookMiddleware, verifySignatureAsync];
    `;
    const page = readFileSync(fileURLToPath(new URL("../../../docs/webhooks.md", import.meta.url)), "utf8");
    const example = /\/\/ Express[^\n]*\n([\s\S]*?)\n\s*\/\/ Koa/.exec(page)?.[1];
    if (!example) throw new Error("docs/webhooks.md: no Express example");
    const code = example.replace(/^ {3}/gm, "").replaceAll("/* … */", "");
    const result = await pkg.typecheckPacked(
      {
        "esm.mts": uses(manifest.name),
        "cjs.cts": uses(manifest.name),
        "express.mts": `${code}\nexport { app };\n`,
      },
      { types: ["@types/express"] },
    );
    expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
  }, 180_000);

  it.each(["web.js", "web.cjs", "fetch.js", "fetch.cjs"])(
    "%s imports nothing from node, even through chunks",
    (entry) => {
      const { files, external } = pkg.imports(entry);
      expect(files).toBeGreaterThan(1);
      expect(external).toEqual([]);
    },
  );

  const valid = vectors.find((v) => v.name === "valid");
  if (!valid || valid.header === null) throw new Error("no valid vector");
  const body = payloadText(valid.payload);

  // A separate node process resolves the package by name (self-reference), as a user would.
  itLoadsAs(
    pkg,
    "loads through the exports map as %s, with one error class across subpaths",
    (load) => `
      const main = ${load}("${manifest.name}");
      const web = ${load}("${manifest.name}/web");
      const args = [${JSON.stringify(body)}, ${JSON.stringify(valid.header)}, ${JSON.stringify(valid.secret)}, { now: ${NOW} }];
      const out = { sync: main.verifySignature(...args), async: await web.verifySignatureAsync(...args) };
      out.sameClass = web.WebhookVerificationError === main.WebhookVerificationError;
      out.subpaths = [];
      for (const sub of ["/koa", "/node", "/fetch", "/fastify"]) out.subpaths.push(Object.keys(${load}("${manifest.name}" + sub)));
      console.log(JSON.stringify(out));
    `,
    {
      sync: NOW,
      async: NOW,
      sameClass: true,
      subpaths: [
        ["koaWebhookMiddleware"],
        ["nodeWebhookMiddleware"],
        ["withWebhookVerification"],
        ["fastifyWebhookPlugin"],
      ],
    },
  );
});
