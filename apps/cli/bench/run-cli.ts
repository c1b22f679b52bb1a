// The built CLI run once by a bench (export.bench.ts, import.bench.ts): in a process of its own,
// with peak-rss.mjs preloaded to record its peak RSS, its `--json` summary read from stdout.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const BIN = here("../dist/bin.js");

/**
 * Runs `deskline <args>` against `baseUrl` with `key`, the peak RSS written to `rssFile`; resolves
 * with the parsed summary and the wall time in seconds, rejects when it exits non-zero.
 */
export function runCli(baseUrl: string, key: string, args: string[], rssFile: string) {
  return new Promise<{ summary: Record<string, number>; seconds: number }>((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ["--import", here("./peak-rss.mjs"), BIN, ...args], {
      env: {
        ...process.env,
        DESKLINE_API_KEY: key,
        DESKLINE_BASE_URL: baseUrl,
        DESKLINE_BENCH_RSS_FILE: rssFile,
      },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let stdout = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.once("close", (code) => {
      // args[1] is the subcommand (`export`, `import`): the message reads as it did in each bench.
      if (code !== 0) return reject(new Error(`${args[1]} exited ${code}: ${stdout}`));
      resolve({ summary: JSON.parse(stdout), seconds: (performance.now() - started) / 1000 });
    });
  });
}
