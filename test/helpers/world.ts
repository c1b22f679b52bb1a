// What every end-to-end test starts from: a spec-checking proxy in front of the run's built
// server, a fresh workspace with a key of every scope (made through the admin API), an SDK
// client, and a way to run the built `deskline` binary, all pointed at the proxy.
import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Deskline } from "@deskline/sdk";
import { type SpecProxy, specScopes, startSpecProxy } from "@deskline/test-kit";
import { inject } from "vitest";

export const CLI_BIN = fileURLToPath(new URL("../../apps/cli/dist/bin.js", import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface World {
  proxy: SpecProxy;
  /** The base URL every public face is given: the proxy's. */
  baseUrl: string;
  workspaceId: string;
  key: string;
  sdk: Deskline;
  /** A call of the admin API (through the proxy, so checked too); throws unless 2xx. */
  admin(method: string, path: string, body?: unknown): Promise<any>;
  /** Runs the built `deskline` with this world's key and base URL, in `cwd`. */
  cli(args: string[], options?: { cwd?: string; env?: Record<string, string> }): Promise<CliResult>;
  /** A scratch directory (files to import, error files, the CLI's config). */
  scratch: string;
  close(): Promise<void>;
}

/**
 * `server` defaults to the run's built server (the project's globalSetup); a test that starts a
 * server of its own (e.g. in a container) passes its base URL and admin token.
 */
export async function newWorld(
  server: { baseUrl: string; adminToken: string } = {
    baseUrl: inject("baseUrl"),
    adminToken: inject("adminToken"),
  },
): Promise<World> {
  const proxy = await startSpecProxy(server.baseUrl);
  const scratch = mkdtempSync(join(tmpdir(), "deskline-e2e-"));
  const admin = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(new URL(path, proxy.url), {
      method,
      headers: { Authorization: `Bearer ${server.adminToken}`, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer: any = await response.json();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(answer)}`);
    return answer;
  };
  const workspace = await admin("POST", "/admin/v1/workspaces", { name: "e2e" });
  const { key } = await admin("POST", `/admin/v1/workspaces/${workspace.id}/api-keys`, {
    name: "e2e",
    scopes: specScopes,
  });
  const cliEnv = {
    PATH: process.env.PATH ?? "",
    HOME: scratch,
    XDG_CONFIG_HOME: join(scratch, "config"),
    XDG_STATE_HOME: join(scratch, "state"),
    DESKLINE_BASE_URL: proxy.url,
    DESKLINE_API_KEY: key,
  };
  return {
    proxy,
    baseUrl: proxy.url,
    workspaceId: workspace.id,
    key,
    sdk: new Deskline({ apiKey: key, baseUrl: proxy.url }),
    admin,
    scratch,
    cli: (args, options = {}) =>
      new Promise((resolve) => {
        execFile(
          process.execPath,
          [CLI_BIN, ...args],
          { cwd: options.cwd ?? scratch, env: { ...cliEnv, ...options.env }, timeout: 60_000 },
          (error, stdout, stderr) => {
            const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
            resolve({ code, stdout, stderr });
          },
        );
      }),
    close: () => proxy.close(),
  };
}
