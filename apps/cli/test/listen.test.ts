// `deskline listen` and `deskline trigger` end to end: the real server, the built binary, and a
// receiver built on the verifier's node middleware that verifies every forwarded event.
import { createHmac, createPublicKey, verify } from "node:crypto";
import { api, newWorkspace } from "@deskline/test-kit";
import { beforeEach, describe, expect, inject, it } from "vitest";
import { AGAIN, giveUpAfter, retry } from "../../server/src/platform/backoff.js";
import { type CliOptions, cli, jsonLines, scratch, spawnCli } from "./helpers.js";
import { type Received, type Receiver, startReceiver } from "./receiver.js";

const SIX = [
  "contact.created",
  "contact.updated",
  "ticket.created",
  "ticket.updated",
  "message.received",
  "conversation.assigned",
];

let key: string;
let options: CliOptions;

beforeEach(async () => {
  ({ key } = await newWorkspace());
  // One state directory per test: the secret and cursors of this workspace's key live there.
  options = { key, env: { XDG_STATE_HOME: scratch(), DESKLINE_ADMIN_TOKEN: inject("adminToken") } };
});

/** Starts `deskline listen`, resolving once it is polling; `stop()` sends Ctrl-C. */
async function listen(args: string[]) {
  const run = spawnCli(["listen", ...args], options);
  const seen = { stdout: "", stderr: "" };
  run.child.stdout.on("data", (chunk: Buffer) => {
    seen.stdout += chunk;
  });
  run.child.stderr.on("data", (chunk: Buffer) => {
    seen.stderr += chunk;
  });
  /** Waits until the output so far matches `pattern`. */
  const waitForOutput = async (pattern: RegExp) => {
    const missing = () => new Error(`listen: no ${pattern} in: ${seen.stdout}${seen.stderr}`);
    const pastDeadline = giveUpAfter(20_000, missing);
    await retry({ firstMs: 25 }, async () => (pattern.test(`${seen.stdout}${seen.stderr}`) ? true : AGAIN), {
      giveUp: () => {
        if (run.child.exitCode !== null) throw missing();
        return pastDeadline();
      },
    });
  };
  await waitForOutput(/Ready\./);
  return {
    ...run,
    waitForOutput,
    stop: (signal: NodeJS.Signals = "SIGINT") => {
      run.child.kill(signal);
      return run.result;
    },
  };
}

/** All events of the workspace, oldest first, as the events API lists them (spec-checked). */
async function allEvents(): Promise<any[]> {
  const response = await api.get("/open/v1/events", { key, query: { limit: 100 } });
  expect(response.status).toBe(200);
  return [...response.body.data].reverse();
}

/** The events API's answer for one event, as raw bytes. */
async function rawEvent(id: string): Promise<string> {
  const response = await fetch(`${inject("baseUrl")}/open/v1/events/${id}`, {
    headers: { Authorization: `Bearer ${key}` },
  });
  expect(response.status).toBe(200);
  return response.text();
}

async function trigger(type: string) {
  const result = await cli(["trigger", type, "--json"], options);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout);
}

async function secret(...flags: string[]): Promise<string> {
  const result = await cli(["listen", "--print-secret", ...flags], options);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout.trim();
}

const idsOf = (received: Received[]) => received.map((r) => r.id);

let receiver: Receiver;
/** A receiver for each test of the calling block, verifying with the key's listen secret. */
function withReceiver() {
  beforeEach(async () => {
    receiver = await startReceiver(await secret());
    return () => receiver.close();
  });
}

describe("deskline listen: what it forwards", () => {
  withReceiver();

  it("forwards each triggered event of all six types, signed like a delivery, verified by the middleware", async () => {
    const listener = await listen(["--forward-to", receiver.url, "--json"]);
    const triggered = [];
    for (const type of SIX) triggered.push(await trigger(type));
    const events = await allEvents();
    expect(new Set(events.map((e) => e.type))).toEqual(new Set(SIX));
    await receiver.waitFor((received) => received.length >= events.length);
    const { code, stdout, stderr } = await listener.stop();
    expect(code, stderr).toBe(0);
    expect(stderr).toContain("Stopped.");

    expect(receiver.refused).toBe(0);
    expect(idsOf(receiver.received)).toEqual(events.map((e) => e.id));
    // Each trigger's last event is the type it was asked for, about what it printed.
    for (const [index, type] of SIX.entries()) {
      const ids = Object.values(triggered[index]).filter((v) => v !== type);
      // (A message.received carries the message, which names its conversation.)
      const about = (e: any) => [e.data.id, e.data.conversation_id];
      expect(
        events.some((e) => e.type === type && about(e).some((id) => ids.includes(id))),
        type,
      ).toBe(true);
    }
    for (const delivery of receiver.received) {
      const body = delivery.body.toString("utf8");
      expect(body).toBe(await rawEvent(delivery.id));
      const { headers } = delivery;
      expect(headers["content-type"]).toBe("application/json");
      expect(headers["service-event"]).toBe(delivery.type);
      expect(headers["service-delivery"]).toBe(delivery.id);
      expect(headers["user-agent"]).toMatch(/^Deskline-Webhooks\/\d+\.\d+\.\d+/);
      // Standard Webhooks: HMAC-SHA256 of `<id>.<timestamp>.<body>` keyed with the decoded secret.
      expect(headers["webhook-id"]).toBe(delivery.id);
      const timestamp = headers["webhook-timestamp"] as string;
      expect(headers["service-signature"]).toMatch(new RegExp(`^t=${timestamp},v1=[0-9a-f]{64}$`));
      const keyBytes = Buffer.from((await secret()).slice("whsec_".length), "base64");
      const expected = createHmac("sha256", keyBytes)
        .update(`${delivery.id}.${timestamp}.${body}`)
        .digest("base64");
      expect(headers["webhook-signature"]).toBe(`v1,${expected}`);
    }
    const lines = jsonLines(stdout);
    expect(lines.map((l) => l.id)).toEqual(events.map((e) => e.id));
    for (const [index, line] of lines.entries()) {
      expect(line).toMatchObject({ type: events[index].type, status: 200, attempts: 1, error: null });
      expect(line.duration_ms).toBeGreaterThanOrEqual(0);
    }
  });

  it("forwards an operational event like any other: webhook_endpoint.disabled, triggered by a disable", async () => {
    const listener = await listen(["--forward-to", receiver.url, "--events", "webhook_endpoint.disabled"]);
    const { endpoint } = await trigger("webhook_endpoint.disabled");
    await receiver.waitFor((received) => received.length === 1);
    expect((await listener.stop()).code).toBe(0);
    const [forwarded] = receiver.received;
    expect(forwarded?.type).toBe("webhook_endpoint.disabled");
    const event = JSON.parse(forwarded?.body.toString("utf8") as string);
    expect(event.data).toMatchObject({ id: endpoint, status: "disabled", reason: "owner" });
  });
});

describe("deskline listen: restarts, --events and --since now", () => {
  withReceiver();

  it("a listener restarted mid-stream misses nothing and forwards nothing twice", async () => {
    const first = await listen(["--forward-to", receiver.url]);
    await trigger("contact.created");
    await trigger("ticket.updated"); // ticket.created, then ticket.updated
    await receiver.waitFor((received) => received.length === 3);
    expect((await first.stop()).code).toBe(0);

    // While nobody listens: three more events.
    await trigger("contact.updated");
    await trigger("ticket.created");

    const second = await listen(["--forward-to", receiver.url]);
    await receiver.waitFor((received) => received.length === 6);
    expect((await second.stop("SIGTERM")).code).toBe(0);

    const third = await listen(["--forward-to", receiver.url]);
    await trigger("conversation.assigned");
    const events = await allEvents();
    expect(events).toHaveLength(9);
    await receiver.waitFor((received) => received.length === 9);
    const { stdout, code } = await third.stop();
    expect(code).toBe(0);
    expect(receiver.refused).toBe(0);
    expect(idsOf(receiver.received)).toEqual(events.map((e) => e.id));
    // One human line per event: time, type, id, the receiver's status and how long it took.
    expect(stdout).toMatch(/^\S+Z {2}conversation\.assigned {7}evt_\w+ {2}200 {2}\d+ ms$/m);
  });

  it("forwards only --events types, and --since now skips what the last run left", async () => {
    const listener = await listen([
      "--forward-to",
      receiver.url,
      "--events",
      "ticket.created,ticket.updated",
    ]);
    await trigger("contact.created");
    await trigger("ticket.updated");
    await receiver.waitFor((received) => received.length === 2);
    await listener.stop();
    expect(receiver.received.map((r) => r.type)).toEqual(["ticket.created", "ticket.updated"]);

    await trigger("ticket.created");
    // `now` is the second the listener starts in (events carry whole seconds): start in the next.
    await new Promise((resolve) => setTimeout(resolve, 1050 - (Date.now() % 1000)));
    const fresh = await listen(["--forward-to", receiver.url, "--since", "now"]);
    await trigger("contact.created");
    await receiver.waitFor((received) => received.length === 3);
    await fresh.stop();
    expect(receiver.received.map((r) => r.type)).toEqual([
      "ticket.created",
      "ticket.updated",
      "contact.created",
    ]);
  });
});

describe("deskline listen: --since an event id, and a receiver down", () => {
  withReceiver();

  it("--since an event id forwards what came after it", async () => {
    await trigger("contact.updated");
    const [created, updated] = await allEvents();
    const listener = await listen(["--forward-to", receiver.url, "--since", created.id]);
    await receiver.waitFor((received) => received.length === 1);
    await listener.stop();
    expect(idsOf(receiver.received)).toEqual([updated.id]);
  });

  it("reports a receiver that is down, retries it, and keeps running", async () => {
    await receiver.close();
    const listener = await listen(["--forward-to", receiver.url, "--json"]);
    await trigger("ticket.created");
    // The JSON line is written once the retries are spent (about 3.5 s).
    await listener.waitForOutput(/"status":null/);
    expect(listener.child.exitCode).toBeNull();
    const { code, stdout, stderr } = await listener.stop();
    expect(code).toBe(0);
    const [line] = jsonLines(stdout);
    expect(line).toMatchObject({ type: "ticket.created", status: null, attempts: 4 });
    expect(line.error).toMatch(/connection refused/);
    expect(stderr).toMatch(/connection refused.*retry 1 of 3/);
  });
});

describe("deskline listen --signing ed25519", () => {
  it("signs v1a with a local key pair: the middleware verifies with the printed public key, and so does node:crypto", async () => {
    const publicKey = await secret("--signing", "ed25519");
    expect(publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    expect(await secret("--signing", "ed25519")).toBe(publicKey);
    const receiver = await startReceiver(publicKey);
    try {
      const listener = await listen(["--forward-to", receiver.url, "--signing", "ed25519"]);
      expect(listener.child.exitCode).toBeNull();
      await trigger("contact.created");
      await receiver.waitFor((received) => received.length === 1);
      const { code, stdout } = await listener.stop();
      expect(code).toBe(0);
      expect(stdout).toContain(`Your webhook public key is ${publicKey}`);
      expect(receiver.refused).toBe(0);
      const [delivery] = receiver.received;
      if (!delivery) throw new Error("nothing forwarded");
      const { headers } = delivery;
      const timestamp = headers["webhook-timestamp"] as string;
      expect(headers["service-signature"]).toMatch(new RegExp(`^t=${timestamp},v1a=[A-Za-z0-9+/]{86}==$`));
      const [scheme, signature] = (headers["webhook-signature"] as string).split(",");
      expect(scheme).toBe("v1a");
      const raw = Buffer.from(publicKey.slice("whpk_".length), "base64");
      const key = createPublicKey({
        key: { kty: "OKP", crv: "Ed25519", x: raw.toString("base64url") },
        format: "jwk",
      });
      const signed = (body: string) =>
        verify(
          null,
          Buffer.from(`${delivery.id}.${timestamp}.${body}`),
          key,
          Buffer.from(signature as string, "base64"),
        );
      expect(signed(delivery.body.toString("utf8"))).toBe(true);
      expect(signed(`${delivery.body.toString("utf8")} `)).toBe(false);
    } finally {
      await receiver.close();
    }
  });
});

describe("listen: usage", () => {
  it("--print-secret prints only a whsec_ secret, the same every time for a key, another for another key", async () => {
    const first = await secret();
    expect(first).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(await secret()).toBe(first);
    ({ key } = await newWorkspace());
    options = { ...options, key };
    expect(await secret()).not.toBe(first);
  });

  it("refuses a missing --forward-to, a bad URL, an unknown type and a bad --since with exit 2", async () => {
    const cases = [
      [[], /--forward-to/],
      [["--forward-to", "ftp://x"], /http/],
      [
        ["--forward-to", "localhost:4000", "--events", "ticket.deleted"],
        /unknown event type ticket\.deleted/,
      ],
      [["--forward-to", "localhost:4000", "--since", "yesterday"], /--since/],
    ] as const;
    for (const [args, message] of cases) {
      const result = await cli(["listen", ...args], options);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr).toMatch(message);
    }
  });
});

describe("deskline trigger", () => {
  it("--list names the six resource types and three operational ones (recovered needs a receiver that comes back)", async () => {
    const result = await cli(["trigger", "--list", "--json"], options);
    expect(jsonLines(result.stdout).map((l) => l.type)).toEqual([
      ...SIX,
      "webhook_endpoint.disabled",
      "webhook_delivery.failed",
      "webhook_endpoint.failing",
    ]);
    expect((await cli(["trigger", "--list"], options)).stdout).toMatch(/^EVENT\s+CREATES/);
  });

  it("prints the ids of what it created", async () => {
    const result = await trigger("conversation.assigned");
    expect(result).toMatchObject({ type: "conversation.assigned" });
    const conversation = await api.get(`/open/v1/conversations/${result.conversation}`, { key });
    expect(conversation.body).toMatchObject({ contact_id: result.contact, assignee_ids: ["agent_trigger"] });
    const human = await cli(["trigger", "ticket.updated"], options);
    expect(human.stdout).toMatch(/^triggered\s+ticket\.updated\nticket\s+tkt_\w+$/m);
  });

  it("an unknown type, or an admin-only type without DESKLINE_ADMIN_TOKEN, exits 2 and creates nothing", async () => {
    const unknown = await cli(["trigger", "ticket.deleted"], options);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("contact.created");
    const noAdmin = await cli(["trigger", "message.received"], {
      ...options,
      env: { ...options.env, DESKLINE_ADMIN_TOKEN: undefined },
    });
    expect(noAdmin.code).toBe(2);
    expect(noAdmin.stderr).toContain("DESKLINE_ADMIN_TOKEN");
    expect(await allEvents()).toEqual([]);
  });
});
