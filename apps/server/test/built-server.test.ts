import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, inject, it } from "vitest";
import { parse } from "yaml";
import { request } from "./helpers/api.js";
import { BUILT, eventually, startMain } from "./helpers/main-process.js";
import { runToEnd } from "./helpers/server-process.js";

/**
 * The production build: `node dist/main.js`, no tsx, finds what it reads outside
 * its own files (the spec, the renderer, the embedded database's install script) and serves;
 * and deployed alone with its production dependencies, it runs from anywhere.
 * The root `pnpm test` builds before the tests; a focused run builds here if it must.
 */

const serverDir = join(import.meta.dirname, "..");
const entry = join(serverDir, "dist/main.js");

/** Synchronous, so a test runs it whole before the other can start, and the build is made once. */
function buildIfMissing(): void {
  if (!existsSync(entry)) execFileSync("pnpm", ["run", "build"], { cwd: serverDir, stdio: "ignore" });
}

// The two blocks share nothing (a server process each, on different databases; their own metrics)
// and mostly wait on the processes, and the deploy: they run at once.
describe.concurrent("the built server, from the workspace", () => {
  it("is the package's deskline-server bin, a node script", ({ expect }) => {
    const pkg = JSON.parse(readFileSync(join(serverDir, "package.json"), "utf8"));
    expect(pkg.bin).toEqual({ "deskline-server": "./dist/main.js" });
    expect(pkg.dependencies.tsx, "tsx is for development only").toBeUndefined();
  });

  it("starts with plain node, on the embedded database, and answers", async ({ expect }) => {
    buildIfMissing();
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

describe.concurrent("the built server, deployed alone", () => {
  it("runs from anywhere once deployed with its production dependencies alone (`pnpm deploy --prod`)", async ({
    expect,
  }) => {
    buildIfMissing();
    const temp = mkdtempSync(join(tmpdir(), "deskline-deploy-"));
    try {
      // What the container image holds: the package's files (`files`: dist) and its production
      // dependencies, the workspace's packages among them copied in (the spec's YAML comes with
      // @deskline/spec). From the lockfile and pnpm's store (`--offline`): no registry is asked.
      const deployed = join(temp, "server");
      // Not execFileSync: the test beside it waits on its server meanwhile.
      const deploy = await runToEnd("pnpm", ["-w", "run", "deploy:server", deployed], {
        cwd: serverDir,
        env: process.env,
        timeoutMs: 180_000,
      });
      expect(deploy.code, deploy.output).toBe(0);
      // The deploy's own lockfile (what was installed) beside the package.
      expect(readdirSync(deployed).sort()).toEqual([
        "console",
        "dist",
        "node_modules",
        "package.json",
        "pnpm-lock.yaml",
      ]);
      expect(existsSync(join(deployed, "node_modules/@deskline/spec/openapi.yaml"))).toBe(true);
      expect(existsSync(join(deployed, "node_modules/tsx")), "no devDependency is deployed").toBe(false);

      // Started from another directory still, on the run's database (the embedded one unless
      // MONGODB_URI names another), in a database of its own.
      const elsewhere = join(temp, "elsewhere");
      mkdirSync(elsewhere);
      const main = startMain(
        { MONGODB_URI: inject("mongodbUri"), MONGODB_DATABASE: `deskline_deployed_${process.pid}` },
        [join(deployed, "dist/main.js")],
        elsewhere,
      );
      const baseUrl = await main.baseUrl;
      await eventually(
        async () => (await request("GET", "/readyz", { baseUrl })).status,
        (status) => status === 200,
        "/readyz of the deployed server",
      );
      const json = await request("GET", "/open/v1/openapi.json", { baseUrl });
      expect(json.status).toBe(200);
      const yaml = await request("GET", "/open/v1/openapi.yaml", { baseUrl });
      expect(yaml.status).toBe(200);
      expect(yaml.body).toBe(readFileSync(join(serverDir, "../../spec/openapi.yaml"), "utf8"));
      expect(json.body.info.version).toBe(parse(yaml.body as string).info.version);
      // The reference page's renderer comes from the deployed node_modules too.
      const page = await request("GET", "/open/v1/docs", { baseUrl });
      const script = /<script src="([^"]+)"/.exec(page.body as string)?.[1] as string;
      expect((await fetch(new URL(script, baseUrl))).status).toBe(200);
      // So do the webhook console's files (the package's `files` ships them beside dist/).
      expect((await fetch(new URL("/console/assets/app.js", baseUrl))).status).toBe(200);

      main.child.kill("SIGTERM");
      const code = await main.exited;
      if (code !== 0) console.log(main.output().slice(-4000));
      expect(code).toBe(0);
    } finally {
      rmSync(temp, { recursive: true, force: true });
    }
  }, 240_000);
});
