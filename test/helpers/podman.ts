// podman as the container test drives it, with the settings of scripts/container/containers.conf
// (runc and cgroupfs: what works on our CI machines) unless
// CONTAINERS_CONF chooses others. Every call has a timeout; failures carry podman's own words.
import { execFile, spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { eventually } from "@deskline/test-kit";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const env = {
  ...process.env,
  CONTAINERS_CONF: process.env.CONTAINERS_CONF ?? `${ROOT}scripts/container/containers.conf`,
};

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command in the repository's root; resolves with its exit code, whatever it is. */
export function run(file: string, args: string[], timeoutMs = 60_000, extraEnv: Record<string, string> = {}) {
  return new Promise<Run>((resolve) => {
    execFile(
      file,
      args,
      { cwd: ROOT, env: { ...env, ...extraEnv }, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** podman's output; throws with its stderr unless it exits 0. */
export async function podman(args: string[], timeoutMs = 60_000): Promise<string> {
  const result = await run("podman", args, timeoutMs);
  if (result.code !== 0) {
    throw new Error(`podman ${args.join(" ")} exited with ${result.code}:\n${result.stderr.slice(-4000)}`);
  }
  return result.stdout;
}

export function hasPodman(): boolean {
  return spawnSync("podman", ["--version"], { stdio: "ignore" }).status === 0;
}

/**
 * The image .ci/run builds in the background while the run installs and typechecks
 * (DESKLINE_CONTAINER_IMAGE_PENDING names the file it writes when done: the tag, or `failed`):
 * waited for, or undefined when this run builds none.
 */
async function builtByCi(): Promise<string | undefined> {
  const pending = process.env.DESKLINE_CONTAINER_IMAGE_PENDING;
  if (!pending) return undefined;
  const deadline = Date.now() + 20 * 60_000;
  while (!existsSync(pending)) {
    if (Date.now() > deadline) throw new Error(`.ci/run's image build wrote no ${pending} in 20 minutes`);
    await new Promise((wait) => setTimeout(wait, 500));
  }
  const result = readFileSync(pending, "utf8").trim();
  if (result === "failed") {
    const log = readFileSync(`${ROOT}.tmp/container-build.log`, "utf8");
    throw new Error(`the image did not build (.ci/run):\n${log.slice(-6000)}`);
  }
  return result;
}

/**
 * Builds the root Dockerfile into `tag` with scripts/container/build-image.sh (which makes sure of
 * the base image first: pulled, or the stand-in where no registry answers). Layers are cached
 * between runs. `standIn`: the Node.js version of the stand-in base, undefined for the real image.
 *
 * Where this run's .ci/run builds `tag` with the same script from the same tree, the test waits
 * for that build rather than repeat it: with every layer cached, podman still spent 15 s of CPU
 * (about 17 s of wall clock) walking the build context.
 */
export async function buildImage(
  tag: string,
): Promise<{ ms: number; standIn: string | undefined; byCi: boolean }> {
  const started = Date.now();
  const byCi = (await builtByCi()) === tag;
  if (!byCi) {
    const built = await run("bash", ["scripts/container/build-image.sh", tag], 20 * 60_000);
    if (built.code !== 0) throw new Error(`the image did not build:\n${built.stderr.slice(-6000)}`);
  }
  const ms = Date.now() - started;
  const [base] = JSON.parse(await podman(["image", "inspect", "docker.io/library/node:20-bookworm-slim"]));
  return { ms, standIn: base.Labels?.["deskline.stand-in.node"], byCi };
}

export interface Container {
  name: string;
  logs(): Promise<string>;
  /** `podman exec` in it; its stdout. */
  exec(args: string[]): Promise<string>;
  /** `podman stop` (SIGTERM, SIGKILL after `timeoutS`): how long it took and how the process exited. */
  stop(timeoutS: number): Promise<{ ms: number; exitCode: number }>;
  remove(): Promise<void>;
}

/**
 * The run's clock for a container's Node: under a moved `Date` (`pnpm test:later`,
 * apps/server/test/helpers/shifted-date.mjs) the same preload and offset, or a container would sign
 * its deliveries and stamp its records on the machine's date, 60 days from the database and the
 * receiver it talks to, which no team's containers and database are.
 */
function runClock(): { env: Record<string, string>; mounts: Record<string, string> } {
  const offset = process.env.DESKLINE_TEST_DATE_OFFSET_MS;
  if (!offset || Number(offset) === 0) return { env: {}, mounts: {} };
  const preload = "/run/deskline-test/shifted-date.mjs";
  return {
    env: { NODE_OPTIONS: `--import ${preload}`, DESKLINE_TEST_DATE_OFFSET_MS: offset },
    mounts: { [`${ROOT}apps/server/test/helpers/shifted-date.mjs`]: preload },
  };
}

/**
 * Starts `image` on the host's network, with `env` and read-only `mounts` (host → container), and
 * returns once it runs.
 *
 * Its output comes straight to this process: `podman run` stays attached with the `passthrough`
 * log driver, so the server's stdout and stderr are pipes this process reads. Through podman's
 * log collector (conmon 2.1 on our CI machines), a container's last line once never reached
 * `podman logs`, though the process had exited 0 after writing it. Read from the pipes, the
 * output is whole once `podman run` has exited.
 */
export async function runContainer(
  image: string,
  name: string,
  env: Record<string, string>,
  mounts: Record<string, string> = {},
): Promise<Container> {
  await run("podman", ["rm", "--force", "--ignore", name]);
  const args = ["run", "--name", name, "--network", "host", "--log-driver", "passthrough"];
  const clock = runClock();
  for (const [key, value] of Object.entries({ ...clock.env, ...env })) args.push("--env", `${key}=${value}`);
  for (const [from, to] of Object.entries({ ...clock.mounts, ...mounts })) {
    args.push("--volume", `${from}:${to}:ro`);
  }
  const attached = attach([...args, image]);
  await runningOrExited(name, attached);
  const exitCode = async () =>
    Number((await podman(["inspect", "--format", "{{.State.ExitCode}}", name])).trim());
  return {
    name,
    logs: async () => attached.output(),
    exec: (args) => podman(["exec", name, ...args]),
    async stop(timeoutS) {
      const started = Date.now();
      await podman(["stop", "--time", String(timeoutS), name], (timeoutS + 60) * 1000);
      const ms = Date.now() - started;
      await attached.ended(60_000);
      return { ms, exitCode: await exitCode() };
    },
    async remove() {
      await run("podman", ["rm", "--force", "--ignore", name]);
      await attached.ended(60_000).catch(() => attached.kill());
    },
  };
}

/** `podman run` attached: what the container wrote (stdout, then stderr) and when it ended. */
interface Attached {
  output(): string;
  exited: Promise<number>;
  /** Resolves once `podman run` has exited and its pipes are drained; throws after `ms`. */
  ended(ms: number): Promise<void>;
  kill(): void;
}

function attach(args: string[]): Attached {
  const child = spawn("podman", args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  const written = { stdout: "", stderr: "" };
  for (const stream of ["stdout", "stderr"] as const) {
    child[stream].setEncoding("utf8").on("data", (chunk: string) => {
      written[stream] += chunk;
    });
  }
  // "close": the process exited and both pipes reached their end.
  const exited = new Promise<number>((done) => {
    child.once("close", (code) => done(code ?? -1));
    child.once("error", () => done(-1));
  });
  return {
    output: () => written.stdout + written.stderr,
    exited,
    async ended(ms) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, fail) => {
        timer = setTimeout(() => fail(new Error(`podman ${args[0]} still attached after ${ms} ms`)), ms);
      });
      await Promise.race([exited, late]).finally(() => clearTimeout(timer));
    },
    kill: () => child.kill("SIGKILL"),
  };
}

/** Waits until podman says the container runs; throws with its output if `podman run` ended first. */
async function runningOrExited(name: string, attached: Attached): Promise<void> {
  let exitCode: number | undefined;
  void attached.exited.then((code) => {
    exitCode = code;
  });
  const state = async () =>
    exitCode === undefined
      ? (await run("podman", ["inspect", "--format", "{{.State.Running}}", name])).stdout.trim()
      : `exited with ${exitCode}`;
  const last = await eventually(
    state,
    (said) => said === "true" || said.startsWith("exited"),
    `container ${name} to run`,
    120_000,
  ).catch((error: Error) => error.message);
  if (last !== "true") throw new Error(`container ${name}: ${last}:\n${attached.output().slice(-4000)}`);
}
