// The container image (Dockerfile) built with podman and run as a team runs it: a ROLE=api and a
// ROLE=worker container on the host's network against a database on the host, a contact created
// through the API (every answer checked against the spec by the world's proxy), its
// contact.created delivered by the worker container to an HTTPS receiver on the host and
// verified, both stopped by `podman stop` cleanly, neither running as root. compose.yaml is
// checked by `podman-compose config`. Where no registry answers, the Dockerfile's base image is the
// stand-in scripts/container/base-image.sh makes.
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually } from "@deskline/test-kit";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type FleetDatabase, startFleetDatabase } from "../helpers/fleet-database.js";
import { buildImage, type Container, hasPodman, podman, run, runContainer } from "../helpers/podman.js";
import { byEventId, startVerifiedReceiver, type VerifiedReceiver } from "../helpers/verified-receiver.js";
import { newWorld, type World } from "../helpers/world.js";

const IMAGE = "localhost/deskline-server:test";
/** For each test that drives podman: containers start and stop slowly on a loaded machine. */
const PODMAN_TIMEOUT = 180_000;
const HOW = "apt-get install -y podman runc debootstrap (what .ci/run does)";
const podmanMissing = !hasPodman();
// CI installs podman (.ci/run sets CI): there a missing podman fails; a developer is told how.
if (podmanMissing && process.env.CI) throw new Error(`podman is not installed: ${HOW}`);
if (podmanMissing) console.warn(`container test skipped: podman is not installed: ${HOW}`);

/** A port free on loopback right now, for a container on the host's network. */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await new Promise((done) => server.once("listening", done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

/** The JSON log lines of a container (pino: one object per line, each with its time in ms). */
function logLines(log: string): { msg?: string; signal?: string; time: number }[] {
  return log
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line));
}

// What the image block's beforeAll starts, for its tests and its afterAll.
const suffix = `${process.pid}`;
const adminToken = `container-${suffix}`;
let database: FleetDatabase | undefined;
let api: Container;
let worker: Container;
let apiUrl: string;
let world: World;
let receiver: VerifiedReceiver;
let certs: string | undefined;

/**
 * The block's setup: the image built and a database on the host, then an api and a worker
 * container on the host's network, the api ready, and a receiver on the host.
 */
async function startContainers(): Promise<void> {
  // The database on the host (MONGODB_URI where the run has one, else an embedded one) starts
  // while the image builds: neither needs the other. A database that started is stopped by
  // afterAll even when the build failed.
  const [building, starting] = await Promise.allSettled([buildImage(IMAGE), startFleetDatabase()]);
  if (starting.status === "fulfilled") database = starting.value;
  if (building.status === "rejected") throw building.reason;
  if (starting.status === "rejected") throw starting.reason;
  const built = building.value;
  const db = starting.value;
  const size = Number((await podman(["image", "inspect", "--format", "{{.Size}}", IMAGE])).trim());
  const base = built.standIn
    ? `a stand-in node:20-bookworm-slim (Node.js ${built.standIn})`
    : "node:20-bookworm-slim";
  const how = built.byCi
    ? "built by .ci/run in the background, waited for"
    : `built in ${(built.ms / 1000).toFixed(0)} s (layers cached between runs)`;
  console.log(`container image ${IMAGE}: ${(size / 1e6).toFixed(0)} MB, ${how} on ${base}`);

  // A copy of the receivers' CA that the container's user (10001, not the file's owner) can read.
  certs = mkdtempSync(join(tmpdir(), "deskline-container-"));
  const caFile = join(certs, "receiver-ca.pem");
  copyFileSync(inject("certFile"), caFile);
  chmodSync(certs, 0o755);
  chmodSync(caFile, 0o644);

  const apiPort = await freePort();
  apiUrl = `http://127.0.0.1:${apiPort}`;
  const common = {
    MONGODB_URI: db.uri,
    MONGODB_DATABASE: db.name,
    // The host's network: loopback only, and a port each (a worker serves its probes too).
    HOST: "127.0.0.1",
    EVENT_RELAY_INTERVAL_MS: "100",
  };
  const workerPort = await freePort();
  // Both containers start together (podman starts each in seconds on a loaded machine).
  [api, worker] = await Promise.all([
    runContainer(IMAGE, `deskline-api-${suffix}`, {
      ...common,
      ROLE: "api",
      PORT: String(apiPort),
      ADMIN_TOKEN: adminToken,
      // The receiver's URL is the host's private address: the api refuses it as an endpoint URL
      // otherwise (docs/decisions.md, "Webhook address policy").
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    }),
    runContainer(
      IMAGE,
      `deskline-worker-${suffix}`,
      {
        ...common,
        ROLE: "worker",
        PORT: String(workerPort),
        NODE_EXTRA_CA_CERTS: "/run/deskline/receiver-ca.pem",
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
        WEBHOOK_RETRY_DELAYS: "50ms,50ms,50ms,50ms",
        WEBHOOK_POLL_INTERVAL_MS: "50",
      },
      { [caFile]: "/run/deskline/receiver-ca.pem" },
    ),
  ]);

  await eventually(
    () =>
      fetch(`${apiUrl}/readyz`).then(
        (r) => r.status,
        () => 0,
      ),
    (status) => status === 200,
    "the api container to be ready",
    120_000,
  ).catch(async (error: Error) => {
    throw new Error(`${error.message}\napi log:\n${await api.logs()}`);
  });
  world = await newWorld({ baseUrl: apiUrl, adminToken });
  receiver = await startVerifiedReceiver({ certFile: inject("certFile"), keyFile: inject("keyFile") });
}

async function removeContainers(): Promise<void> {
  await receiver?.close();
  await world?.close();
  await api?.remove();
  await worker?.remove();
  await database?.stop();
  if (certs) rmSync(certs, { recursive: true, force: true });
}

// The image block's tests, each group a function so that the block, which holds the hooks they
// share, fits a screen.

/** The image's own checks: its HEALTHCHECK, and the user and process it runs as. */
function imageChecks(): void {
  it("is ready and healthy: the HEALTHCHECK (node's fetch of /readyz) passes in the api and the worker", async () => {
    const ready = await fetch(`${world.baseUrl}/readyz`);
    expect(ready.status).toBe(200);
    const [inspected] = JSON.parse(await podman(["image", "inspect", IMAGE]));
    const probe = inspected.Healthcheck.Test.join(" ");
    expect(probe).toMatch(/^CMD node -e .*\/readyz/);
    expect(probe).not.toContain("curl");
    const verdicts = await Promise.all(
      [api, worker].map((container) =>
        eventually(
          () => run("podman", ["healthcheck", "run", container.name]),
          (result) => result.code === 0,
          `${container.name}'s HEALTHCHECK`,
          60_000,
        ),
      ),
    );
    for (const verdict of verdicts) expect(verdict.code).toBe(0);
  });

  it("runs node itself as PID 1 (exec form, so SIGTERM reaches it), as a user that is not root", async () => {
    for (const container of [api, worker]) {
      const status = await container.exec(["cat", "/proc/1/status"]);
      const uid = /^Uid:\s+(\d+)\s+(\d+)/m.exec(status);
      expect(uid?.[1]).toBe("10001");
      expect(uid?.[2]).toBe("10001");
      const cmdline = await container.exec(["cat", "/proc/1/cmdline"]);
      expect(cmdline.split("\0").filter(Boolean)).toEqual(["node", "dist/main.js"]);
    }
  });
}

/** The containers at work: a delivery, a clean stop, and a start without a database. */
function containersAtWork(): void {
  it("creates a contact through the api container; the worker container delivers contact.created, verified", async () => {
    const endpoint = await world.sdk.webhookEndpoints.create({
      url: receiver.url,
      description: "container receiver",
      events: ["contact.created"],
    });
    receiver.useSecret(endpoint.secret as string);
    const contact = await world.sdk.contacts.create({ name: "Ada Container", email: "ada@example.com" });

    const events = await eventually(
      async () => byEventId(receiver.verified),
      (arrived) => arrived.size > 0,
      "contact.created from the worker container",
      90_000,
    ).catch(async (error: Error) => {
      throw new Error(`${error.message}\nworker log:\n${await worker.logs()}`);
    });
    const [delivered] = [...events.values()];
    expect(delivered?.event).toMatchObject({ type: "contact.created", data: contact });
    expect(receiver.refused).toBe(0);
    // The worker delivered it: the api container queues deliveries but sends none.
    expect(logLines(await worker.logs()).some((line) => line.msg === "delivering webhooks")).toBe(true);
    expect(logLines(await api.logs()).some((line) => line.msg === "delivering webhooks")).toBe(false);
  });

  it("stops cleanly on `podman stop`: SIGTERM, a graceful shutdown logged, exit code 0", async () => {
    for (const container of [api, worker]) {
      // 60 s before podman would SIGKILL (exit code 137); the server stops in well under that.
      // Returns once the container exited and all it wrote was read (helpers/podman.ts).
      const stopped = await container.stop(60);
      const log = await container.logs();
      console.log(`${container.name}: podman stop took ${(stopped.ms / 1000).toFixed(1)} s`);
      const tail = `${container.name}'s log ends:\n${log.slice(-3000)}`;
      expect(stopped.exitCode, tail).toBe(0);
      // In the order they were logged, by their time: what podman passed on came here out of that
      // order once ("stopped" before "shutting down", 33 ms older, on a loaded machine). Stable.
      const lines = logLines(log).sort((a, b) => a.time - b.time);
      expect(
        lines.some((line) => line.signal === "SIGTERM"),
        tail,
      ).toBe(true);
      expect(lines.at(-1)?.msg, tail).toBe("stopped");
    }
  });

  it("refuses to start without MONGODB_URI, saying so (the image has no embedded database)", async () => {
    const result = await run("podman", ["run", "--rm", "--network", "none", IMAGE], 120_000);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("configuration error: MONGODB_URI is required");
  });
}

describe.skipIf(podmanMissing)("the Dockerfile's image, run by podman", { timeout: PODMAN_TIMEOUT }, () => {
  beforeAll(startContainers, 25 * 60_000);
  afterAll(removeContainers, 120_000);

  afterAll(() => {
    // Whatever the tests did, no answer of the container broke the spec.
    if (world) expect(world.proxy.problems()).toEqual([]);
  });

  describe("its healthcheck, user and process", imageChecks);
  describe("its containers at work", containersAtWork);
});

describe("compose.yaml", () => {
  it("is accepted by `podman-compose config`: MongoDB 7 as a replica set, an api and a worker", async (ctx) => {
    const installed = await run("bash", ["scripts/install-podman-compose.sh", "--check"]);
    if (installed.code !== 0) {
      const how = "bash scripts/install-podman-compose.sh (what .ci/run does)";
      if (process.env.CI) throw new Error(`podman-compose is not installed: ${how}`);
      ctx.skip(`podman-compose is not installed: ${how}`);
    }
    const config = await run(installed.stdout.trim(), ["-f", "compose.yaml", "config"], 60_000, {
      ADMIN_TOKEN: "compose-admin-token",
    });
    expect(config.code, config.stderr).toBe(0);
    const services = config.stdout.slice(config.stdout.indexOf("\nservices:"));
    expect(services).toMatch(/\n {2}api:\n/);
    expect(services).toMatch(/\n {2}worker:\n/);
    expect(services).toMatch(/image: docker\.io\/library\/mongo:7\n/);
    expect(services).toContain("--replSet");
    expect(services).toContain("rs.initiate");
    expect(services).toContain("ROLE: api");
    expect(services).toContain("ROLE: worker");
    expect(services).toContain("ADMIN_TOKEN: compose-admin-token");
    expect(services).toContain("MONGODB_URI: mongodb://mongo:27017/?replicaSet=rs0");
  });
});
