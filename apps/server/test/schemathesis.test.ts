// Spec-driven fuzzing: Schemathesis generates requests for every operation of the served spec
// (examples, boundary coverage, random data, and stateful create → get → update → delete chains
// along the spec's `links`) against a real server process, with every check it has: server
// errors, undeclared statuses, content types and headers, bodies off their schema, schema-valid
// data refused, schema-invalid data accepted, 405 without `Allow`, deleted resources still there…
// Zero failures is the bar. The settings are the repository's schemathesis.toml, which a
// developer's `schemathesis run …/open/v1/openapi.json` from the root reads the same way.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { parse } from "yaml";
import { loadConfig } from "../src/config.js";
import { ALL_SCOPES, request } from "./helpers/api.js";
import { startInProcess } from "./helpers/in-process.js";
import { eventually } from "./helpers/main-process.js";
import { runToEnd } from "./helpers/server-process.js";

const root = join(import.meta.dirname, "../../..");

/** The installed executable, from the install script itself (it knows where and which version). */
function schemathesis(): string | undefined {
  const check = spawnSync("bash", [join(root, "scripts/install-schemathesis.sh"), "--check"], {
    encoding: "utf8",
  });
  return check.status === 0 ? check.stdout.trim().split("\n").at(-1) : undefined;
}

const INSTALL = "bash scripts/install-schemathesis.sh (Python 3.12+; .ci/run does it)";

/** The operations schemathesis.toml relaxes a check for (its `[[operations]]` blocks). */
function exemptedOperations(): string[] {
  const toml = readFileSync(join(root, "schemathesis.toml"), "utf8");
  return [...toml.matchAll(/^include-operation-id\s*=\s*(.+)$/gm)].flatMap(([, value]) =>
    [...(value as string).matchAll(/"(\w+)"/g)].map(([, id]) => id as string),
  );
}

describe("schemathesis.toml", () => {
  // Only rules no OpenAPI keyword can state are exempted, and each is written in its operation.
  it("exempts only the rules the schema cannot state, each written in its operation", () => {
    expect(exemptedOperations().sort()).toEqual(
      [
        "batchUpsertContacts",
        "createContact",
        "createCustomFieldDefinition",
        "createTicket",
        "createWebhookEndpoint",
        "listContacts",
        "listTickets",
        "mergeContacts",
        "recoverWebhookEndpoint",
        "resendEvent",
        "searchContacts",
        "searchTickets",
        "updateContact",
        "updateCustomFieldDefinition",
        "updateTicket",
        "updateWebhookEndpoint",
      ].sort(),
    );
    const spec = parse(readFileSync(join(root, "spec/openapi.yaml"), "utf8"));
    const descriptions = new Map<string, string>();
    for (const item of Object.values(spec.paths) as Record<
      string,
      { operationId?: string; description?: string }
    >[])
      for (const operation of Object.values(item))
        if (operation.operationId) descriptions.set(operation.operationId, operation.description ?? "");
    for (const id of exemptedOperations())
      expect(descriptions.get(id), id).toContain("**Checked beyond the schema:**");
    const toml = readFileSync(join(root, "schemathesis.toml"), "utf8");
    expect(toml).toMatch(/^allow-x00 = false$/m);
    // Nothing switched off: every check, every phase.
    expect(toml).not.toMatch(/enabled = false/);
  });
});

/**
 * A server of its own (in this process) on its own database, with a workspace, a key of every
 * scope, and something for the links from lists to follow.
 */
async function startFuzzServer() {
  const adminToken = "fuzz-admin-token";
  // `ROLE=api` delivers no webhooks, so the endpoints the fuzzer registers (any https URL) are
  // never contacted.
  const server = await startInProcess(
    loadConfig({
      MONGODB_URI: inject("mongodbUri"),
      MONGODB_DATABASE: `deskline_fuzz_${process.pid}`,
      ADMIN_TOKEN: adminToken,
      ROLE: "api",
      RATE_LIMIT_PER_SECOND: "0",
    }),
  );
  const baseUrl = await server.baseUrl;
  // Listening comes before the database is reached; until then every operation is a 503.
  await eventually(
    () => request("GET", "/readyz", { baseUrl }),
    (response) => response.status === 200,
    "the fuzz server's readiness",
  );
  const admin = (path: string, body: unknown) =>
    request("POST", path, { baseUrl, body, headers: { Authorization: `Bearer ${adminToken}` } });
  const workspace = await admin("/admin/v1/workspaces", { name: "fuzz" });
  const key = (
    await admin(`/admin/v1/workspaces/${workspace.body.id}/api-keys`, { name: "fuzz", scopes: ALL_SCOPES })
  ).body.key as string;
  // Something for the links from lists to follow: a conversation (no public operation makes
  // one) with its contact, and the events their creation records.
  const contact = await request("POST", "/open/v1/contacts", { baseUrl, key, body: { name: "Fuzz seed" } });
  expect(contact.status, JSON.stringify(contact.body)).toBe(201);
  const conversation = await admin(`/admin/v1/workspaces/${workspace.body.id}/conversations`, {
    contact_id: contact.body.id,
    channel: "email",
    message: { body: "Seeded for the fuzzer." },
  });
  expect(conversation.status, JSON.stringify(conversation.body)).toBe(201);
  return { server, baseUrl, key };
}

/** Runs Schemathesis against `baseUrl` and logs how long it took, phase by phase. */
async function runSchemathesis(executable: string, baseUrl: string, key: string) {
  // From the repository root, as a developer runs it: schemathesis.toml is read from there
  // (its `hooks` path too), the key comes from DESKLINE_API_KEY as the file says.
  const overrides = [
    ...(process.env.SCHEMATHESIS_MAX_EXAMPLES
      ? ["--max-examples", process.env.SCHEMATHESIS_MAX_EXAMPLES]
      : []),
    ...(process.env.SCHEMATHESIS_SEED ? ["--seed", process.env.SCHEMATHESIS_SEED] : []),
  ];
  const started = performance.now();
  const result = await runToEnd(
    executable,
    ["run", `${baseUrl}/open/v1/openapi.json`, "--no-color", ...overrides],
    {
      cwd: root,
      env: { ...process.env, DESKLINE_API_KEY: key, NO_COLOR: "1", COLUMNS: "200" },
      timeoutMs: 900_000,
    },
  );
  // The phases' own times (`✅  Coverage (in 41.2s)`), to see which one a slower run grew in.
  const phases = [...result.output.matchAll(/✅ {2}(\w+) \(in ([\d.]+s)\)/g)].map(
    ([, phase, time]) => `${phase} ${time}`,
  );
  console.info(
    `schemathesis: ${Math.round((performance.now() - started) / 1000)} s, ${/(\d+) generated/.exec(result.output)?.[0] ?? "?"} (${phases.join(", ")})`,
  );
  return result;
}

describe("Schemathesis against the served spec", () => {
  it("passes every check in every phase, as schemathesis.toml sets them", async (ctx) => {
    const executable = schemathesis();
    if (!executable) {
      // CI installs it (.ci/run sets CI); a developer's machine is told how rather than passing silently.
      if (process.env.CI) throw new Error(`Schemathesis is not installed: ${INSTALL}`);
      ctx.skip(`Schemathesis is not installed: ${INSTALL}`);
      return;
    }
    const { server, baseUrl, key } = await startFuzzServer();
    const result = await runSchemathesis(executable, baseUrl, key);
    await server.stop();
    // A 500's cause is in the server's log, not in what Schemathesis saw: its error lines go along.
    const errors = server
      .output()
      .split("\n")
      .filter((line) => /"level":(50|60)/.test(line));
    expect(result.code, [result.output.slice(-20_000), ...errors.slice(-20)].join("\n")).toBe(0);
    expect(/Configuration:\s+(\S+)/.exec(result.output)?.[1]).toBe(join(root, "schemathesis.toml"));
    // Every operation was exercised in every phase, and the stateful phase ran its chains.
    expect(Number(/(\d+) generated/.exec(result.output)?.[1])).toBeGreaterThan(2000);
    for (const phase of ["Examples", "Coverage", "Fuzzing", "Stateful"])
      expect(result.output).toMatch(new RegExp(`✅ {2}${phase} \\(in`));
    const [, selected, total] = /Selected: (\d+)\/(\d+)/.exec(result.output) ?? [];
    expect(selected).toBe(total);
    expect(result.output).toMatch(/Stateful[\s\S]*Scenarios:\s+[1-9]/);
  }, 960_000);
});
