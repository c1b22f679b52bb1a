// The tests run the built `deskline` binary against the real server: build it (and the SDK and
// the verifier it imports) when the sources are newer than the build, then start the server as its own tests do.
import { execFileSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { serverGlobalSetup } from "@deskline/test-kit";
import type { TestProject } from "vitest/node";

const root = fileURLToPath(new URL("../../..", import.meta.url));

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function builtAt(file: string): number {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

export default async function setup(project: TestProject) {
  for (const pkg of ["packages/sdk", "packages/webhook-verifier", "apps/cli"]) {
    const built = builtAt(join(root, pkg, pkg === "apps/cli" ? "dist/bin.js" : "dist/index.js"));
    if (built < newestSource(join(root, pkg, "src"))) {
      execFileSync("pnpm", ["--silent", "run", "build"], { cwd: join(root, pkg), stdio: "ignore" });
    }
  }
  return serverGlobalSetup(project);
}
