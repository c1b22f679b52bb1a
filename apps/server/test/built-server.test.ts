import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { request } from "./helpers/api.js";
import { BUILT, eventually, startMain } from "./helpers/main-process.js";

/**
 * The production build: `node dist/main.js`, no tsx, finds what it reads outside
 * its own files (the spec, the renderer, the embedded database's install script) and serves.
 * The root `pnpm test` builds before the tests; a focused run builds here if it must.
 */

const serverDir = join(import.meta.dirname, "..");
const entry = join(serverDir, "dist/main.js");

describe("the built server", () => {
  it("is the package's deskline-server bin, a node script", () => {
    const pkg = JSON.parse(readFileSync(join(serverDir, "package.json"), "utf8"));
    expect(pkg.bin).toEqual({ "deskline-server": "./dist/main.js" });
    expect(pkg.dependencies.tsx, "tsx is for development only").toBeUndefined();
  });

  it("starts with plain node, on the embedded database, and answers", async () => {
    if (!existsSync(entry)) execFileSync("pnpm", ["run", "build"], { cwd: serverDir, stdio: "ignore" });
    expect(readFileSync(entry, "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true);

    // Whatever database the run uses (MONGODB_URI or none: then the build starts its own).
    const main = startMain({ ADMIN_TOKEN: "built-admin-token", METRICS_TOKEN: "built-metrics" }, BUILT);
    const baseUrl = await main.baseUrl;
    expect(main.child.spawnargs).toEqual([process.execPath, ...BUILT]);
    expect((await request("GET", "/healthz", { baseUrl })).status).toBe(200);
    await eventually(
      async () => (await request("GET", "/readyz", { baseUrl })).status,
      (status) => status === 200,
      "/readyz",
    );
    const spec = await request("GET", "/open/v1/openapi.json", { baseUrl });
    expect(spec.body.info.title).toBe("Deskline Open API");
    const page = await request("GET", "/open/v1/docs", { baseUrl });
    const script = /<script src="([^"]+)"/.exec(page.body as string)?.[1] as string;
    expect((await fetch(new URL(script, baseUrl))).status).toBe(200);
    const workspace = await request("POST", "/admin/v1/workspaces", {
      baseUrl,
      headers: { Authorization: "Bearer built-admin-token" },
      body: { name: "built" },
    });
    expect(workspace.status).toBe(201);
    const metrics = await request("GET", "/metrics", {
      baseUrl,
      headers: { Authorization: "Bearer built-metrics" },
    });
    expect(metrics.body).toMatch(
      /deskline_http_requests_total\{operation="createWorkspace",status="201"\} 1/,
    );

    main.child.kill("SIGTERM");
    const code = await main.exited;
    if (code !== 0) console.log(main.output().slice(-4000));
    expect(code).toBe(0);
  }, 120_000);
});
