// The CLI as a whole: configuration and profiles, the contact, webhook and event commands, --json,
// help on every command, shell completion, and the generated schemas' freshness.
import { execFileSync } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { admin, api, newWorkspace } from "@deskline/test-kit";
import { describe, expect, inject, it } from "vitest";
import { generatedFiles } from "../scripts/generate-schemas.js";
import { cli, jsonLines, scratch, setting } from "./helpers.js";

describe("configuration", () => {
  it("keeps keys in profiles in a 0600 file, never prints them whole, and picks flags over env over profile", async () => {
    const { key } = await newWorkspace();
    const { key: other } = await newWorkspace();
    const config = scratch();
    const env = { XDG_CONFIG_HOME: config, DESKLINE_BASE_URL: undefined };

    const set = await cli(["config", "set", "api-key", key], { env });
    expect(set.code).toBe(0);
    expect(set.stdout).not.toContain(key);
    await cli(["config", "set", "base-url", `${inject("baseUrl")}/open/v1`], { env });
    const file = join(config, "deskline", "config.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, "utf8")).profiles.default).toEqual({
      api_key: key,
      base_url: inject("baseUrl"),
    });

    const got = await cli(["config", "get", "api-key"], { env });
    expect(got.stdout.trim()).toBe(`dsk_${key.slice(4, 8)}…${key.slice(-4)}`);
    const shown = await cli(["config", "show", "--json"], { env });
    expect(shown.stdout).not.toContain(key);
    expect(JSON.parse(shown.stdout)).toMatchObject({ profile: "default", api_key_from: "profile default" });

    // The profile alone is enough to call the API.
    await api.post("/open/v1/contacts", { key, body: { name: "Mine" } });
    const mine = await cli(["contacts", "list", "--json"], { env });
    expect(jsonLines(mine.stdout).map((c) => c.name)).toEqual(["Mine"]);

    // A second profile, chosen with --profile; then the environment beats it, and a flag beats both.
    await cli(["config", "set", "api-key", "-", "--profile", "other"], { env, input: `${other}\n` });
    await cli(["config", "set", "base-url", inject("baseUrl"), "--profile", "other"], { env });
    expect(
      jsonLines((await cli(["contacts", "list", "--json", "--profile", "other"], { env })).stdout),
    ).toEqual([]);
    const fromEnv = await cli(["--profile", "other", "contacts", "list", "--json"], {
      env: { ...env, DESKLINE_API_KEY: key },
    });
    expect(jsonLines(fromEnv.stdout)).toHaveLength(1);
    const badFlag = await cli(["contacts", "list", "--api-key", "dk_wrong"], {
      env: { ...env, DESKLINE_API_KEY: key },
    });
    expect(badFlag.code).toBe(1);
    expect(badFlag.stderr).toMatch(/code invalid_api_key/);

    const unknown = await cli(["contacts", "list", "--profile", "nope"], { env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("no profile 'nope'");
  });

  it("without any key: a clear message and exit 2", async () => {
    const result = await cli(["tickets", "list"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/no API key.*\n.*deskline config set api-key/);
  });
});

describe("contact commands", () => {
  it("create with --set, get, update (field= clears), list by filters, delete", async () => {
    const { key } = await newWorkspace();
    const created = await cli(
      [
        "contacts",
        "create",
        ...setting(
          "name=Ada Lovelace",
          "email=ada@example.com",
          "phone=+44 20 7946 0001",
          "tags=vip|beta",
          "custom_fields.plan=pro",
          "lifecycle_stage=lead",
        ),
        "--json",
      ],
      { key },
    );
    expect(created.code).toBe(0);
    const ada = JSON.parse(created.stdout);
    expect(ada).toMatchObject({ tags: ["vip", "beta"], custom_fields: { plan: "pro" } });

    const updated = await cli(
      ["contacts", "update", ada.id, "--set", "phone=", "--set", "lifecycle_stage=customer", "--json"],
      {
        key,
      },
    );
    expect(JSON.parse(updated.stdout)).toMatchObject({ phone: null, lifecycle_stage: "customer" });

    await api.post("/open/v1/contacts", { key, body: { name: "Grace", lifecycle_stage: "customer" } });
    const byStage = await cli(
      ["contacts", "list", "--lifecycle-stage", "customer", "--tag", "vip", "--json"],
      { key },
    );
    expect(jsonLines(byStage.stdout).map((c) => c.id)).toEqual([ada.id]);
    const snake = await cli(["contacts", "list", "--lifecycle_stage", "customer", "--json"], { key });
    expect(jsonLines(snake.stdout)).toHaveLength(2);

    const table = await cli(["contacts", "get", ada.id], { key });
    expect(table.stdout).toMatch(/^email\s+ada@example\.com$/m);
    const deleted = await cli(["contacts", "delete", ada.id], { key });
    expect(deleted.stdout.trim()).toBe(`deleted ${ada.id}`);
    const bad = await cli(["contacts", "create", "--set", "email=nope", "--json"], { key });
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stderr).error).toMatchObject({
      status: 400,
      request_id: expect.stringMatching(/^req_/),
    });
  });
});

describe("webhook endpoints and events: the commands", () => {
  it("create (secret once), list, get, update, rotate-secret, stats, delete; events list", async () => {
    const { key } = await newWorkspace();
    const url = "https://hooks.deskline-test.invalid/x";
    const create = ["webhooks", "endpoints", "create", "--url", url, "--event", "ticket.updated", "--json"];
    const created = await cli(create, { key });
    expect(created.code).toBe(0);
    const endpoint = JSON.parse(created.stdout);
    expect(endpoint.secret).toMatch(/^whsec_/);
    const listed = jsonLines((await cli(["webhooks", "endpoints", "list", "--json"], { key })).stdout);
    expect(listed.map((e) => e.id)).toEqual([endpoint.id]);
    expect(listed[0]).not.toHaveProperty("secret");
    // Each row's recent deliveries come with the list: none yet.
    expect(listed[0].recent_deliveries).toMatchObject({
      counted: 0,
      success_rate: null,
      last_attempt_at: null,
    });
    const table = (await cli(["webhooks", "endpoints", "list"], { key })).stdout;
    expect(table).toMatch(/^ID\s+STATUS\s+URL\s+EVENTS\s+SUCCESS\s+LAST ATTEMPT\s+DESCRIPTION$/m);
    const updated = await cli(
      [
        "webhooks",
        "endpoints",
        "update",
        endpoint.id,
        "--set",
        "events=ticket.created;ticket.updated",
        "--json",
      ],
      { key },
    );
    expect(JSON.parse(updated.stdout).events).toEqual(["ticket.created", "ticket.updated"]);
    const rotated = await cli(
      ["webhooks", "endpoints", "rotate-secret", endpoint.id, "--expires-in", "0", "--json"],
      { key },
    );
    expect(JSON.parse(rotated.stdout).secret).not.toBe(endpoint.secret);
    const stats = await cli(["webhooks", "endpoints", "stats", endpoint.id, "--json"], { key });
    expect(JSON.parse(stats.stdout)).toMatchObject({
      object: "webhook_endpoint_stats",
      totals: { succeeded: 0, failed: 0, pending: 0, dropped: 0 },
    });
    const shown = await cli(["webhooks", "endpoints", "get", endpoint.id], { key });
    expect(shown.stdout).toMatch(/^url\s+https:\/\/hooks\.deskline-test\.invalid\/x$/m);
    expect((await cli(["webhooks", "endpoints", "delete", endpoint.id], { key })).code).toBe(0);

    const events = await cli(["events", "list", "--type", "ticket.created", "--json"], { key });
    expect(events.code).toBe(0);
    for (const event of jsonLines(events.stdout)) expect(event.type).toBe("ticket.created");
  });
});

describe("webhook endpoints: signing schemes", () => {
  it("--signing on create and rotate-secret: an Ed25519 endpoint shows its public key, no secret; a bad scheme exits 2", async () => {
    const { key } = await newWorkspace();
    const url = "https://hooks.deskline-test.invalid/ed";
    const created = await cli(
      ["webhooks", "endpoints", "create", "--url", url, "--signing", "ed25519", "--json"],
      {
        key,
      },
    );
    expect(created.code, created.stderr).toBe(0);
    const endpoint = JSON.parse(created.stdout);
    expect(endpoint).toMatchObject({ signing: "ed25519", secret: null });
    expect(endpoint.public_key).toMatch(/^whpk_/);
    const rotate = [
      "webhooks",
      "endpoints",
      "rotate-secret",
      endpoint.id,
      "--signing",
      "hmac_sha256",
      "--json",
    ];
    const rotated = await cli(rotate, { key });
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(JSON.parse(rotated.stdout)).toMatchObject({ signing: "hmac_sha256", public_key: null });
    expect(JSON.parse(rotated.stdout).secret).toMatch(/^whsec_/);
    const refused = await cli(["webhooks", "endpoints", "create", "--url", url, "--signing", "rsa"], { key });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("hmac_sha256, ed25519");
  });
});

describe("webhook endpoints' custom headers, and event types", () => {
  it("--header on create and update: custom headers by name (values never shown); 'Name:' removes one", async () => {
    const { key } = await newWorkspace();
    const url = "https://hooks.deskline-test.invalid/h";
    const created = await cli(
      [
        "webhooks",
        "endpoints",
        "create",
        "--url",
        url,
        "--header",
        // A value no random id or secret can hold by chance, as a bare `k1` can.
        "X-Api-Key: header-value-k1",
        "--header",
        "X-Team:crm",
        "--json",
      ],
      { key },
    );
    expect(created.code, created.stderr).toBe(0);
    const endpoint = JSON.parse(created.stdout);
    expect(endpoint.header_names).toEqual(["X-Api-Key", "X-Team"]);
    expect(created.stdout).not.toContain("header-value-k1");
    const update = [
      "webhooks",
      "endpoints",
      "update",
      endpoint.id,
      "--header",
      "X-Team:",
      "--header",
      "X-New: n",
    ];
    const updated = await cli([...update, "--json"], { key });
    expect(updated.code, updated.stderr).toBe(0);
    expect(JSON.parse(updated.stdout).header_names).toEqual(["X-Api-Key", "X-New"]);
    const owned = await cli(
      ["webhooks", "endpoints", "create", "--url", url, "--header", "Host: x", "--json"],
      {
        key,
      },
    );
    expect(owned.code).toBe(1);
    expect(JSON.parse(owned.stderr).error).toMatchObject({ status: 400, param: "headers.Host" });
    expect(
      (await cli(["webhooks", "endpoints", "create", "--url", url, "--header", "no colon"], { key })).code,
    ).toBe(2);
  });

  it("events types: a table of every type, and with --json each with the schema of its body", async () => {
    const { key } = await newWorkspace();
    const table = await cli(["events", "types"], { key });
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^TYPE\s+KIND\s+DESCRIPTION$/m);
    expect(table.stdout).toMatch(/^contact\.created\s+resource\s+A contact was created$/m);
    const json = jsonLines((await cli(["events", "types", "--json"], { key })).stdout);
    expect(json.find((t) => t.type === "ticket.updated")?.schema).toMatchObject({ type: "object" });
  });
});

/** Every command path of the CLI, read from its own completion script. */
const EXAMPLE = /\nExamples?:\n {2}\$ .*deskline /;

async function commandPaths(): Promise<string[]> {
  const script = (await cli(["completion", "bash"])).stdout;
  return [...script.matchAll(/^ {4}"([^"]*)"\)/gm)].map((match) => match[1] as string);
}

describe("help and completion", () => {
  it("every command's --help shows an example and exits 0", async () => {
    const paths = await commandPaths();
    expect(paths).toEqual(
      expect.arrayContaining([
        "",
        "contacts import",
        "tickets solve",
        "webhooks endpoints create",
        "events list",
      ]),
    );
    // The executable once (what it prints and its exit code), then every command in this
    // process (helpers.ts: the same program and exit-code mapping, without a Node start for
    // each of about 60 commands).
    const root = await cli(["--help"], { process: true });
    expect(root.code).toBe(0);
    expect(root.stdout).toMatch(EXAMPLE);
    for (const path of paths) {
      const result = await cli([...path.split(" ").filter(Boolean), "--help"]);
      expect(result.code, path).toBe(0);
      expect(result.stdout, path).toMatch(EXAMPLE);
    }
  });

  it("usage errors exit 2", async () => {
    // The executable's exit status itself.
    const binary = { process: true };
    expect((await cli(["contacts", "list", "--no-such-flag"], binary)).code).toBe(2);
    expect((await cli(["nonsense"], binary)).code).toBe(2);
    expect((await cli(["contacts", "import"], binary)).code).toBe(2);
  });

  it("bash completes commands and flags", async () => {
    const script = (await cli(["completion", "bash"])).stdout;
    const complete = (words: string[]) =>
      execFileSync(
        "bash",
        [
          "-c",
          `${script}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${words.length - 1}; _deskline; echo "\${COMPREPLY[@]}"`,
        ],
        { encoding: "utf8" },
      ).trim();
    expect(complete(["deskline", "co"]).split(" ").sort()).toEqual([
      "completion",
      "config",
      "console",
      "contacts",
      "conversations",
    ]);
    expect(complete(["deskline", "--profile", "prod", "contacts", "im"])).toBe("import");
    expect(complete(["deskline", "contacts", "import", "--dr"])).toBe("--dry-run");
    expect((await cli(["completion", "zsh"])).stdout).toContain("bashcompinit");
  });
});

describe("console", () => {
  it("--json prints {url, expires_at}: a one-time link that opens a session of the key's workspace", async () => {
    const { workspaceId, key } = await newWorkspace(["webhooks:manage"]);
    const result = await cli(["console", "--json"], { key });
    expect(result.code, result.stderr).toBe(0);
    const printed = JSON.parse(result.stdout);
    expect(Object.keys(printed).sort()).toEqual(["expires_at", "url"]);
    const url = new URL(printed.url);
    expect(url.origin).toBe(inject("baseUrl"));
    const token = url.hash.replace("#token=", "");
    const opened = await fetch(new URL("/console/session", inject("baseUrl")), {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ token }),
    });
    expect(opened.status).toBe(200);
    expect(await opened.json()).toMatchObject({ workspace_id: workspaceId, expires_at: printed.expires_at });
    const human = await cli(["console", "--expires-in", "600"], { key });
    expect(human.stdout).toMatch(/^http:\/\/.*\/console\/#token=cst_\S+\nOpen it by .* the session ends at /);
  });

  it("without webhooks:manage, a clear refusal naming the scope, exit 1; a bad --expires-in is a usage error", async () => {
    const { key } = await newWorkspace(["contacts:read"]);
    const refused = await cli(["console", "--json"], { key });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toContain("webhooks:manage");
    expect((await cli(["console", "--expires-in", "soon"], { key })).code).toBe(2);
  });
});

describe("generated schemas", () => {
  it("match the spec (run `pnpm -F @deskline/cli generate` when this fails)", async () => {
    for (const [file, text] of await generatedFiles()) expect(readFileSync(file, "utf8"), file).toBe(text);
  });
});

describe("conversations", () => {
  it("list by filter, get, messages, reply and note", async () => {
    const { workspaceId, key } = await newWorkspace();
    const contact = (await api.post("/open/v1/contacts", { key, body: { name: "Chatty" } })).body;
    const created = await admin("POST", `/admin/v1/workspaces/${workspaceId}/conversations`, {
      contact_id: contact.id,
      channel: "chat",
      message: { body: "Hello?" },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;

    const listed = await cli(
      ["conversations", "list", "--contact-id", contact.id, "--unread", "true", "--json"],
      { key },
    );
    expect(jsonLines(listed.stdout).map((c) => c.id)).toEqual([id]);
    expect((await cli(["conversations", "get", id], { key })).stdout).toMatch(/^channel\s+chat$/m);

    const reply = await cli(["conversations", "reply", id, "-m", "On it!", "--json"], { key });
    expect(JSON.parse(reply.stdout)).toMatchObject({
      body: "On it!",
      internal_note: false,
      direction: "outbound",
    });
    const note = await cli(["conversations", "note", id, "--body", "-", "--json"], {
      key,
      input: "VIP, be quick",
    });
    expect(JSON.parse(note.stdout)).toMatchObject({ body: "VIP, be quick", internal_note: true });

    const messages = jsonLines((await cli(["conversations", "messages", id, "--json"], { key })).stdout);
    expect(messages.map((m) => m.body)).toEqual(["VIP, be quick", "On it!", "Hello?"]);
    const unread = await cli(["conversations", "list", "--unread", "true", "--json"], { key });
    expect(jsonLines(unread.stdout)).toEqual([]);
  });
});
