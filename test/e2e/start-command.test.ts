// `pnpm start` as a newcomer runs it, then Ctrl-C: the terminal sends SIGINT to the whole
// foreground process group (pnpm, the server), and the run ends quietly with status 0, with no
// pnpm error line; and its log says in words how delivery wakes, with no refusal of a feature
// the embedded database never had. The group is the test's own (`detached`), so the signal
// reaches what a terminal's would.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { eventually } from "@deskline/test-kit";
import { expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

it("pnpm start, then Ctrl-C: status 0, no pnpm error, delivery's wake said in words", async () => {
  const child = spawn("pnpm", ["start", "--ephemeral"], {
    cwd: ROOT,
    detached: true,
    // PORT 0: any free port; the banner says which. The run's database settings are the test's.
    env: { ...process.env, PORT: "0", MONGODB_URI: "", DESKLINE_EMBEDDED_DB: "mongo-java-server" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk;
  });
  child.stderr.on("data", (chunk: Buffer) => {
    output += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: string | null }>((done) =>
    child.once("exit", (code, signal) => done({ code, signal })),
  );
  await eventually(
    async () => output,
    (text) => text.includes("delivering webhooks"),
    "the server's banner and its worker",
    120_000,
  );
  process.kill(-(child.pid as number), "SIGINT");
  expect(await exited, output).toEqual({ code: 0, signal: null });
  expect(output).toContain('"msg":"stopped"');
  expect(output).not.toMatch(/ERR_PNPM|ELIFECYCLE/);
  expect(output).toContain("webhook wake: looking for due deliveries every");
  expect(output).not.toContain("$changeStream");
}, 180_000);
