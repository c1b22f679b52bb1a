// `pnpm test:later [vitest args]`: the vitest suite as it runs on a later date, 60 days ahead by
// default (DESKLINE_TEST_DATE_OFFSET_MS to choose): every Node process the tests start, and the
// embedded database they start, read the moved clock (docs/development.md, "Tests 60 days from
// now"). Not part of `pnpm test`: it runs the suite a second time.
import { spawn } from "node:child_process";

const SIXTY_DAYS_MS = 60 * 86_400_000;
const preload = new URL("../apps/server/test/helpers/shifted-date.mjs", import.meta.url);
const env = {
  ...process.env,
  NODE_OPTIONS: [process.env.NODE_OPTIONS, `--import=${preload.href}`].filter(Boolean).join(" "),
  DESKLINE_TEST_DATE_OFFSET_MS: process.env.DESKLINE_TEST_DATE_OFFSET_MS ?? String(SIXTY_DAYS_MS),
};
// Only mongo-java-server takes the moved clock (scripts/mongo-java-server/Launcher.java): a mongod,
// downloaded where the machine can, or one at MONGODB_URI keeps its host's, and delivery, which
// runs on the database's time, would stand that far from what the processes write.
if (!env.MONGODB_URI && !env.DESKLINE_EMBEDDED_DB) env.DESKLINE_EMBEDDED_DB = "mongo-java-server";
if (env.MONGODB_URI || env.DESKLINE_EMBEDDED_DB !== "mongo-java-server") {
  console.warn("test:later: the database keeps its own clock (MONGODB_URI or DESKLINE_EMBEDDED_DB is set)");
}
const vitest = spawn("vitest", ["run", ...process.argv.slice(2)], { stdio: "inherit", env });
vitest.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
