// Spec-driven fuzzing: Schemathesis generates requests for every operation of spec/openapi.yaml
// (examples, boundary coverage, random data, and stateful create → get → update → delete chains
// along the spec's `links`) against a real server process, and fails on a 5xx, a status or content
// type the spec does not declare, or a body that breaks its schema. Zero failures is the bar.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { ALL_SCOPES, request } from "./helpers/api.js";
import { eventually, startMain } from "./helpers/main-process.js";

const root = join(import.meta.dirname, "../../..");

/** The installed executable, from the install script itself (it knows where and which version). */
function schemathesis(): string | undefined {
  const check = spawnSync("bash", [join(root, "scripts/install-schemathesis.sh"), "--check"], {
    encoding: "utf8",
  });
  return check.status === 0 ? check.stdout.trim().split("\n").at(-1) : undefined;
}

const INSTALL = "bash scripts/install-schemathesis.sh (Python 3.12+; .ci/run does it)";

/** Runs a command to its end, with everything it printed. */
function run(command: string, args: string[], cwd: string) {
  return new Promise<{ code: number | null; output: string }>((done) => {
    // A hung run fails the test with what it printed instead of waiting out vitest's timeout.
    const child = spawn(command, args, { cwd, env: { ...process.env, NO_COLOR: "1" }, timeout: 480_000 });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once("close", (code) => done({ code, output }));
  });
}

describe("Schemathesis against spec/openapi.yaml", () => {
  it("finds no server error, undeclared status or content type, or response off its schema", async (ctx) => {
    const executable = schemathesis();
    if (!executable) {
      // CI installs it (.ci/run sets CI); a developer's machine is told how rather than passing silently.
      if (process.env.CI) throw new Error(`Schemathesis is not installed: ${INSTALL}`);
      ctx.skip(`Schemathesis is not installed: ${INSTALL}`);
      return;
    }
    const adminToken = "fuzz-admin-token";
    // A process of its own on its own database: `ROLE=api` delivers no webhooks, so the endpoints
    // the fuzzer registers (any https URL) are never contacted.
    const server = startMain({
      MONGODB_URI: inject("mongodbUri"),
      MONGODB_DATABASE: `deskline_fuzz_${process.pid}`,
      ADMIN_TOKEN: adminToken,
      ROLE: "api",
      RATE_LIMIT_PER_SECOND: "0",
    });
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

    // Its own working directory: Schemathesis keeps a cache of examples in `.schemathesis/`.
    const cwd = join(root, ".tmp/schemathesis");
    mkdirSync(cwd, { recursive: true });
    const result = await run(
      executable,
      [
        "run",
        join(root, "spec/openapi.yaml"),
        "--url",
        baseUrl,
        "--header",
        `Authorization: Bearer ${key}`,
        "--checks",
        "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance",
        "--phases",
        "examples,coverage,fuzzing,stateful",
        // Bounded for CI's two cores (about a minute); SCHEMATHESIS_MAX_EXAMPLES raises it locally.
        "--max-examples",
        process.env.SCHEMATHESIS_MAX_EXAMPLES ?? "25",
        "--seed",
        process.env.SCHEMATHESIS_SEED ?? "14",
        "--workers",
        "2",
        "--request-timeout",
        "10",
        "--no-color",
      ],
      cwd,
    );
    server.child.kill("SIGTERM");
    await server.exited;
    expect(result.code, result.output.slice(-20_000)).toBe(0);
    // Every operation was exercised, and the stateful phase ran its chains.
    expect(Number(/(\d+) generated/.exec(result.output)?.[1])).toBeGreaterThan(1000);
    const [, selected, total] = /Selected: (\d+)\/(\d+)/.exec(result.output) ?? [];
    expect(selected).toBe(total);
    expect(result.output).toMatch(/Stateful[\s\S]*Scenarios:\s+[1-9]/);
  }, 600_000);
});
