// The package as users install it (publint and attw run as the release runs them, in
// test/e2e/packages-publish.test.ts): keep Node out of the browser entry, load the built files
// through the exports map, and typecheck a project that has only the packed tarball installed.
import { fileURLToPath } from "node:url";
import { builtPackage, itLoadsAs } from "@deskline/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const pkg = builtPackage(fileURLToPath(new URL("..", import.meta.url)));
const { manifest } = pkg;

beforeAll(() => pkg.ensureBuilt("web.js"), 120_000);
afterAll(() => pkg.dispose());

// The checks read the built files and one packed tarball, and change nothing: side by side.
describe.concurrent("package", () => {
  it("depends at runtime on openapi-fetch and undici only", () => {
    expect(Object.keys(manifest.dependencies ?? {}).sort()).toEqual(["openapi-fetch", "undici"]);
  });

  it("its packed tarball typechecks alone: the spec's types are inlined in its declarations", async () => {
    // Uses the types so that an unresolved import (an `any`) would fail: the @ts-expect-error
    // lines hold only while the spec's shapes are really there.
    const uses = (from: string) => `
      import { type Contact, type DesklineEvent, Deskline, type components } from "${from}";
      import { createDesklineClient } from "${from}/web";
      const deskline = new Deskline({ apiKey: "dk_x", baseUrl: "http://127.0.0.1:1" });
      export async function nameOf(id: string): Promise<string> {
        const contact: Contact = await deskline.contacts.get(id);
        return contact.name;
      }
      export function previousName(event: DesklineEvent): string | undefined {
        return event.type === "contact.updated" ? event.previous_attributes.name : undefined;
      }
      export const raw = createDesklineClient({ apiKey: "dk_x", baseUrl: "http://127.0.0.1:1" });
      // @ts-expect-error a contact's name is a string
      export const wrong: Contact["name"] = 1;
      // @ts-expect-error the path's parameters are typed
      export const call = () => raw.GET("/open/v1/contacts/{id}", { params: { path: { nope: 1 } } });
      export type Status = components["schemas"]["TicketStatus"];
    `;
    const result = await pkg.typecheckPacked({
      "esm.mts": uses(manifest.name),
      "cjs.cts": uses(manifest.name),
    });
    expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
  }, 180_000);

  it.each(["web.js", "web.cjs"])("%s imports only openapi-fetch, even through chunks", (entry) => {
    const { files, external } = pkg.imports(entry);
    expect(files).toBeGreaterThan(1);
    expect(external).toEqual(["openapi-fetch"]);
  });

  it("browsers, workers, Deno and edge runtimes resolve the package to the web entry", () => {
    const root = manifest.exports["."];
    for (const condition of ["browser", "worker", "workerd", "edge-light", "deno"]) {
      expect(root[condition]).toEqual(manifest.exports["./web"]);
    }
  });

  itLoadsAs(
    pkg,
    "loads through the exports map as %s, one error class across entries",
    (load) => `
      const main = ${load}("${manifest.name}");
      const web = ${load}("${manifest.name}/web");
      const deskline = new main.Deskline({ apiKey: "dk_x", baseUrl: "http://127.0.0.1:1" });
      console.log(JSON.stringify({
        version: main.VERSION,
        namespaces: Object.keys(deskline).sort(),
        sameErrors: main.DesklineError === web.DesklineError && main.NotFoundError === web.NotFoundError,
        raw: typeof web.createDesklineClient({ apiKey: "dk_x", baseUrl: "http://127.0.0.1:1" }).GET,
      }));
    `,
    {
      version: manifest.version,
      namespaces: [
        "consoleLinks",
        "contacts",
        "conversations",
        "customFieldDefinitions",
        "events",
        "raw",
        "tickets",
        "webhookEndpoints",
      ],
      sameErrors: true,
      raw: "function",
    },
  );
});
