// `deskline webhooks endpoints …`: register, list and remove the HTTPS endpoints that receive events.

import type {
  components,
  Deskline,
  EventType,
  WebhookRecoveryPreview as RecoveryPreview,
  WebhookEndpoint,
  WebhookEndpointSigning,
  WebhookEndpointUpdate,
} from "@deskline/sdk";
import { type Command, InvalidArgumentError, Option } from "commander";
import { clientFor, globalsOf } from "../context.js";
import { PartialFailure, UsageError } from "../errors.js";
import { catalogOf } from "../fields.js";
import { webhookEndpointSigningSchema, webhookEndpointUpdateSchema } from "../generated/schemas.js";
import { type Column, formatTable, printObject, writeLine } from "../output.js";
import { startRecoveryProgress } from "../progress.js";
import { deliveryColumns, guided } from "../webhooks/deliveries.js";
import { pointInTime, rfc3339, WHEN_FORMATS } from "../when.js";
import * as kit from "./kit.js";

const COLUMNS: Column<WebhookEndpoint>[] = [
  { header: "ID", value: (e) => e.id },
  { header: "STATUS", value: (e) => e.status },
  { header: "URL", value: (e) => e.url },
  { header: "EVENTS", value: (e) => e.events },
  // How the newest (at most 100) deliveries went: the list carries it, no request per row.
  { header: "SUCCESS", value: (e) => successRate(e.recent_deliveries?.success_rate) },
  { header: "LAST ATTEMPT", value: (e) => e.recent_deliveries?.last_attempt_at ?? null },
  { header: "DESCRIPTION", value: (e) => e.description },
];

/** A success rate as people read it (`97.5%`), or nothing before any settled delivery. */
const successRate = (rate: number | null | undefined) =>
  rate == null ? null : `${Math.round(rate * 1000) / 10}%`;

/**
 * `--header 'Name: value'` (repeatable) into the body's `headers`; on update, `'Name:'` with no
 * value removes that header (`null`). The server checks the names.
 */
function headersOf(
  flags: string[] | undefined,
  allowRemoval: boolean,
): Record<string, string | null> | undefined {
  if (!flags) return undefined;
  const headers: Record<string, string | null> = {};
  for (const flag of flags) {
    const colon = flag.indexOf(":");
    const name = flag.slice(0, colon).trim();
    const value = flag.slice(colon + 1).trim();
    if (colon < 1 || !name) throw new UsageError(`--header '${flag}': give 'Name: value'`);
    if (!value && !allowRemoval) throw new UsageError(`--header '${flag}': give a value ('Name: value')`);
    headers[name] = value || null;
  }
  return headers;
}

const HEADER_HELP = "a custom header sent with every delivery, 'Name: value' (repeatable)";

/** What `--since`/`--until` of `recover` take. */
const WINDOW_FORMATS = `an event id (evt_…: from that event on), ${WHEN_FORMATS}`;

/**
 * The instant a `--since`/`--until` value names, checked before any call: an event id stands for
 * its event's `created` (looked up by `instantOf`), so "recover since the first failure" is the
 * failed delivery's `event_id`, as `listen --since evt_…` is.
 */
function windowEdge(flag: string, value: string): { eventId: string } | { at: string } {
  if (/^evt_[0-9A-Za-z]+$/.test(value)) return { eventId: value };
  const seconds = pointInTime(value);
  if (seconds === undefined) throw new UsageError(`${flag} '${value}': give ${WINDOW_FORMATS}`);
  return { at: rfc3339(seconds) };
}

/** The API's `since`/`until`: RFC 3339, or an event's `created` (Unix seconds; the window includes it). */
async function instantOf(deskline: Deskline, edge: { eventId: string } | { at: string }) {
  if ("at" in edge) return edge.at;
  return (await guided(deskline.events.get(edge.eventId), { eventId: edge.eventId })).created;
}

/** Polls the recovery until its job has gone through the window, drawing its progress on a terminal. */
async function waitForRecovery(deskline: Deskline, id: string) {
  const progress = startRecoveryProgress();
  try {
    return await deskline.webhookEndpoints.waitForRecovery(id, {
      intervalMs: RECOVERY_POLL_MS,
      onProgress: (recovery) => progress.update(recovery),
    });
  } finally {
    progress.stop();
  }
}

/** How often `--wait` reads a recovery: often enough for a lively bar, one small GET each. */
const RECOVERY_POLL_MS = 500;

/** What `update` writes, and its help. */
const TARGET: kit.BodyTarget = { noun: "endpoint", catalog: () => catalogOf(webhookEndpointUpdateSchema) };
const HELP = {
  update: {
    description: "change an endpoint (url, description, events…)",
    examples: [
      "deskline webhooks endpoints update we_0VbeYBCu9tPuFypVLWBsJN --set description='CRM sync' --set 'events=ticket.created;ticket.updated'",
      "deskline webhooks endpoints update we_0VbeYBCu9tPuFypVLWBsJN --set rate_limit=50",
      "deskline webhooks endpoints update we_0VbeYBCu9tPuFypVLWBsJN --header 'X-Api-Key: gw_new' --header 'X-Old:'",
    ],
  },
};

/** The schemes an endpoint signs with, as the spec lists them. */
const signingOption = (what: string) =>
  new Option("--signing <scheme>", what).choices(webhookEndpointSigningSchema.enum);

interface CreateOptions {
  url: string;
  signing?: WebhookEndpointSigning;
  description?: string;
  event?: string[];
  header?: string[];
  rateLimit?: number;
  filter?: Record<string, unknown>;
}

export function register(webhooks: Command): void {
  kit.examples(webhooks, "deskline webhooks endpoints list");
  const endpoints = webhooks
    .command("endpoints")
    .description(
      "webhook endpoints: list, create, get, update, rotate-secret, delete; test, deliveries, attempts, resend-deliveries, recover and recovery",
    );
  kit.examples(
    endpoints,
    "deskline webhooks endpoints create --url https://hooks.example.com/deskline --event ticket.updated",
  );
  listCommand(endpoints);
  createCommand(endpoints);
  kit.getCommand(
    endpoints,
    {
      noun: "webhook endpoint",
      id: "we",
      example: "deskline webhooks endpoints get we_0VbeYBCu9tPuFypVLWBsJN",
    },
    (d, id) => d.webhookEndpoints.get(id),
  );
  updateCommand(endpoints);
  rotateSecretCommand(endpoints);
  statsCommand(endpoints);
  testCommand(endpoints);
  resendDeliveriesCommand(endpoints);
  kit.deleteCommand(
    endpoints,
    {
      noun: "webhook endpoint",
      id: "we",
      example: "deskline webhooks endpoints delete we_0VbeYBCu9tPuFypVLWBsJN",
    },
    (d, id) => d.webhookEndpoints.delete(id),
  );
  recoverCommand(endpoints);
  recoveryCommand(endpoints);
  deliveriesCommand(endpoints);
  attemptsCommand(endpoints);
  eventDeliveriesCommand(webhooks);
}

/** `deskline webhooks deliveries --event-id …`: where up to 100 events went, in one request a page. */
function eventDeliveriesCommand(webhooks: Command): void {
  kit.listingCommand(
    webhooks,
    {
      name: "deliveries",
      description:
        "list the deliveries of up to 100 events (--event-id, repeatable), to every endpoint, newest first",
      operation: "listWebhookDeliveries",
      columns: deliveryColumns("events"),
      examples: [
        "deskline webhooks deliveries --event-id evt_2bXkqB4cD6eF8gHi evt_2bXkrD6eF8gHiJk",
        "deskline events list --type ticket.created --limit 100 --json | jq -r .id | xargs deskline webhooks deliveries --json --event-id",
      ],
    },
    (d, query) => d.webhookEndpoints.listDeliveries(query),
  );
}

/** `deskline webhooks endpoints list`: every endpoint (the operation has no filters). */
function listCommand(endpoints: Command): void {
  kit.examples(
    endpoints
      .command("list")
      .description("list webhook endpoints (secrets are never listed)")
      .option("--limit <n>", "at most this many in total", kit.positiveInteger)
      .action(runList),
    "deskline webhooks endpoints list --json",
  );
}

/** `deskline webhooks endpoints create`: prints the secret, this once. */
function createCommand(endpoints: Command): void {
  kit.examples(
    endpoints
      .command("create")
      .description("register an endpoint; prints its signing secret, which is shown this once")
      .requiredOption(
        "--url <url>",
        "HTTPS URL that receives the events (or http://127.0.0.1:… on a development server)",
      )
      .option("--description <text>", "what the endpoint is for")
      .option("--event <type>", "an event type to receive (repeatable; default: all)", kit.collect)
      .option("--header <header>", HEADER_HELP, kit.collect)
      .option("--rate-limit <n>", "deliveries per second at most (default: no limit)", kit.positiveInteger)
      .option(
        "--filter <json>",
        "a content filter the events must pass, as JSON (docs/webhooks.md, Content filters)",
        filterOption,
      )
      .addOption(
        signingOption(
          "hmac_sha256 (default): a secret, printed this once; ed25519: a key pair, whose public_key receivers verify with (no secret)",
        ),
      )
      .action(runCreate),
    "deskline webhooks endpoints create --url https://hooks.example.com/deskline --event contact.created --event contact.updated",
    "deskline webhooks endpoints create --url https://hooks.example.com/deskline --header 'X-Api-Key: gw_4f9c2a7e'",
    "deskline webhooks endpoints create --url https://hooks.example.com/deskline --rate-limit 20",
    `deskline webhooks endpoints create --url https://hooks.example.com/deskline --event ticket.created --filter '{"data":{"priority":{"$in":["urgent"]}}}'`,
    "deskline webhooks endpoints create --url https://hooks.example.com/deskline --signing ed25519",
  );
}

/** `--filter`: a JSON object, or a usage error that says so (the server checks the rest). */
function filterOption(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InvalidArgumentError(`must be JSON, e.g. '{"data":{"priority":"urgent"}}'`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidArgumentError("must be a JSON object");
  }
  return value as Record<string, unknown>;
}

async function runCreate(options: CreateOptions, command: Command): Promise<void> {
  const deskline = await clientFor(command);
  const headers = headersOf(options.header, false) as Record<string, string> | undefined;
  const created = await deskline.webhookEndpoints.create({
    url: options.url,
    ...(options.description ? { description: options.description } : {}),
    ...(options.event ? { events: options.event as EventType[] } : {}),
    ...(headers ? { headers } : {}),
    ...(options.rateLimit ? { rate_limit: options.rateLimit } : {}),
    ...(options.filter ? { filter: options.filter } : {}),
    ...(options.signing ? { signing: options.signing } : {}),
  });
  printObject(created, Boolean(globalsOf(command).json));
}

/** `deskline webhooks endpoints update`: `--set`/`--data` and `--header` (`'Name:'` removes one). */
function updateCommand(endpoints: Command): void {
  kit.updateCommand<WebhookEndpointUpdate>(
    endpoints,
    TARGET,
    HELP.update,
    (d, id, body) => d.webhookEndpoints.update(id, body),
    {
      options: (command) =>
        command.option("--header <header>", `${HEADER_HELP}; 'Name:' removes one`, kit.collect),
      body: (options) => {
        const headers = headersOf(options.header as string[] | undefined, true);
        return headers ? { headers } : {};
      },
    },
  );
}

function rotateSecretCommand(endpoints: Command): void {
  kit.examples(
    endpoints
      .command("rotate-secret")
      .description(
        "make a new signing secret (printed this once); the old one stays valid for --expires-in seconds",
      )
      .argument("<id>", "endpoint id")
      .option(
        "--expires-in <seconds>",
        "grace period of the old secret (0: stop using it now)",
        kit.positiveInteger,
      )
      .addOption(
        signingOption(
          "switch the endpoint to this scheme (default: keep its own); both sign during the grace",
        ),
      )
      .action(runRotateSecret),
    "deskline webhooks endpoints rotate-secret we_0VbeYBCu9tPuFypVLWBsJN --expires-in 3600",
    "deskline webhooks endpoints rotate-secret we_0VbeYBCu9tPuFypVLWBsJN --signing ed25519",
  );
}

function statsCommand(endpoints: Command): void {
  kit.examples(
    endpoints
      .command("stats")
      .description(
        "count the endpoint's deliveries of the last 24 hours by status, in total and per hour (what the webhook console charts)",
      )
      .argument("<id>", "endpoint id (we_…)")
      .action(runStats),
    "deskline webhooks endpoints stats we_0VbeYBCu9tPuFypVLWBsJN --json | jq .totals",
  );
}

function deliveriesCommand(endpoints: Command): void {
  kit.nestedListingCommand(
    endpoints,
    {
      name: "deliveries",
      description:
        "list the endpoint's deliveries (one each time an event was queued to it), newest first: status (pending, succeeded, failed, dropped), attempts, last answer",
      argument: "endpoint id (we_…)",
      operation: "listWebhookEndpointDeliveries",
      columns: deliveryColumns("endpoint"),
      examples: [
        "deskline webhooks endpoints deliveries we_0VbeYBCu9tPuFypVLWBsJN --status failed",
        "deskline webhooks endpoints deliveries we_0VbeYBCu9tPuFypVLWBsJN --event-type ticket.updated --created-after 6h --json",
      ],
    },
    (d, id, query) => d.webhookEndpoints.deliveries(id, query),
    (listing, id) => guided(listing, { endpointId: id }),
  );
}

/** `endpoints attempts`: the HTTP attempts to the endpoint, of all its deliveries or (`--delivery-id`) of one. */
function attemptsCommand(endpoints: Command): void {
  kit.nestedListingCommand(
    endpoints,
    {
      name: "attempts",
      description:
        "list the endpoint's HTTP attempts, newest first: attempt number, the answer's status, how long it took, why it failed",
      argument: "endpoint id (we_…)",
      operation: "listWebhookEndpointAttempts",
      columns: ATTEMPT_COLUMNS,
      examples: [
        "deskline webhooks endpoints attempts we_0VbeYBCu9tPuFypVLWBsJN",
        "deskline webhooks endpoints attempts we_0VbeYBCu9tPuFypVLWBsJN --delivery-id dlv_2bXkq9VwX0yZ2aBb",
      ],
    },
    (d, id, query) => d.webhookEndpoints.listAttempts(id, query),
    (listing, id) => guided(listing, { endpointId: id }),
  );
}

type Attempt = components["schemas"]["DeliveryAttempt"];
const ATTEMPT_COLUMNS: Column<Attempt>[] = [
  { header: "ID", value: (a) => a.id },
  { header: "DELIVERY", value: (a) => a.delivery_id },
  { header: "EVENT", value: (a) => a.event_id },
  { header: "ATTEMPT", value: (a) => a.attempt },
  { header: "CODE", value: (a) => a.status_code },
  { header: "MS", value: (a) => a.duration_ms },
  { header: "ERROR", value: (a) => a.error },
  { header: "STARTED", value: (a) => a.created_at },
];

/** `endpoints recover`: start a recovery of a window, and follow it with `--wait`. */
function recoverCommand(endpoints: Command): void {
  kit.examples(
    endpoints
      .command("recover")
      .description(
        "deliver again, oldest first, every event of a time window that the endpoint missed (failed, dropped, or never sent while it was disabled); safe to repeat",
      )
      .argument("<id>", "endpoint id (we_…); it must be enabled (but for --dry-run)")
      .option(
        "--since <when>",
        `start of the window (default: the endpoint's first failure since it was last healthy): ${WINDOW_FORMATS}`,
      )
      .option("--until <when>", "end of the window (default: now), in the same forms")
      .option("--dry-run", "queue nothing: show what a recovery would queue, counted by reason")
      .option(
        "--wait",
        "wait until the server's workers have gone through the whole window, with a progress bar",
      )
      .addHelpText("after", RECOVER_HELP)
      .action(runRecover),
    "deskline webhooks endpoints recover we_0VbeYBCu9tPuFypVLWBsJN --dry-run",
    "deskline webhooks endpoints recover we_0VbeYBCu9tPuFypVLWBsJN",
    "deskline webhooks endpoints recover we_0VbeYBCu9tPuFypVLWBsJN --since 2d",
    "deskline webhooks endpoints recover we_0VbeYBCu9tPuFypVLWBsJN --since evt_2bXkqB4cD6eF8gHi",
    "deskline webhooks endpoints recover we_0VbeYBCu9tPuFypVLWBsJN --since 2026-03-01T00:00:00Z --until 2026-03-02T00:00:00Z --json",
    "deskline webhooks endpoints recover we_0VbeYBCu9tPuFypVLWBsJN --since 2d --wait",
  );
}

const RECOVER_HELP = [
  "",
  "After an outage: enable the endpoint, then recover: without --since the window starts at",
  "its first failure since it was last healthy (the event of its oldest failed or dropped",
  "delivery after its newest succeeded one). --dry-run shows first what would be queued.",
  "Events already delivered, or already waiting for a delivery, are not queued again, and",
  "neither is an event older than the endpoint or than its subscription to the event's type.",
  "The window includes both ends and reaches back at most as far as events are kept (30 days).",
].join("\n");

async function runRecover(
  id: string,
  options: { since?: string; until?: string; wait?: boolean; dryRun?: boolean },
  command: Command,
): Promise<void> {
  if (options.dryRun && options.wait)
    throw new UsageError("--dry-run queues nothing to --wait for: give one of them");
  const since = options.since === undefined ? undefined : windowEdge("--since", options.since);
  const until = options.until === undefined ? undefined : windowEdge("--until", options.until);
  const deskline = await clientFor(command);
  const body = {
    ...(since ? { since: await instantOf(deskline, since) } : {}),
    ...(until ? { until: await instantOf(deskline, until) } : {}),
  };
  if (options.dryRun)
    return printPreview(
      await guided(deskline.webhookEndpoints.previewRecovery(id, body), { endpointId: id }),
      command,
    );
  const started = await guided(deskline.webhookEndpoints.recover(id, body), { endpointId: id });
  const recovery = options.wait ? await waitForRecovery(deskline, started.id) : started;
  const json = Boolean(globalsOf(command).json);
  printObject(recovery, json);
  if (!json && !options.wait) {
    writeLine(`\nfollow it: deskline webhooks endpoints recovery ${recovery.id} (or recover with --wait)`);
  } else if (!json && recovery.queued > 0) {
    writeLine(`\nfollow them: deskline webhooks endpoints deliveries ${id} --status pending`);
  }
}

/** What `recover --dry-run` prints: the preview, and the command that would queue it. */
function printPreview(preview: RecoveryPreview, command: Command): void {
  const json = Boolean(globalsOf(command).json);
  printObject(preview, json);
  if (json) return;
  const { total, failed, dropped, never_sent } = preview.would_queue;
  writeLine(
    `\nwould queue ${total} (failed ${failed}, dropped ${dropped}, never sent ${never_sent}); ` +
      `queue them: deskline webhooks endpoints recover ${preview.endpoint_id} --since ${preview.since}`,
  );
}

/** `endpoints recovery <id>`: how far a recovery is, or (`--wait`) a bar until it is done. */
function recoveryCommand(endpoints: Command): void {
  kit.examples(
    endpoints
      .command("recovery")
      .description(
        "show a recovery and how far it is: status (queued, running, succeeded), events read, deliveries queued",
      )
      .argument("<id>", "recovery id (rcv_…), from recover")
      .option("--wait", "wait until it has gone through the whole window, with a progress bar")
      .action(runRecovery),
    "deskline webhooks endpoints recovery rcv_2bXkt7MnO9pQ1rSt --wait",
  );
}

async function runList(options: { limit?: number }, command: Command): Promise<void> {
  const deskline = await clientFor(command);
  const items = deskline.webhookEndpoints.list({ limit: kit.pageSize(options.limit) });
  await kit.listCommand(command, items, COLUMNS, options.limit);
}

async function runRotateSecret(
  id: string,
  options: { expiresIn?: number; signing?: WebhookEndpointSigning },
  command: Command,
): Promise<void> {
  const deskline = await clientFor(command);
  const body = {
    ...(options.expiresIn === undefined ? {} : { expires_in: options.expiresIn }),
    ...(options.signing ? { signing: options.signing } : {}),
  };
  printObject(await deskline.webhookEndpoints.rotateSecret(id, body), Boolean(globalsOf(command).json));
}

/** `endpoints test <id> --event-type <type>`: send the catalog's example of a type, marked as a test. */
function testCommand(endpoints: Command): void {
  kit.examples(
    endpoints
      .command("test")
      .description(
        "send a test event to the endpoint: the catalog's example of a type (deskline events types), signed and marked test: true, through the normal delivery",
      )
      .argument("<id>", "endpoint id (we_…); it must be enabled")
      .requiredOption("--event-type <type>", "the event type whose example to send")
      .action(runTest),
    "deskline webhooks endpoints test we_0VbeYBCu9tPuFypVLWBsJN --event-type ticket.created",
  );
}

async function runTest(id: string, options: { eventType: string }, command: Command): Promise<void> {
  const deskline = await clientFor(command);
  const body = { event_type: options.eventType as EventType };
  const delivery = await guided(deskline.webhookEndpoints.sendTestEvent(id, body), { endpointId: id });
  const json = Boolean(globalsOf(command).json);
  printObject(delivery, json);
  if (!json)
    writeLine(`\nfollow it: deskline webhooks endpoints attempts ${id} --delivery-id ${delivery.id}`);
}

/** `endpoints resend-deliveries <dlv…>`: up to 100 chosen deliveries again, each to its endpoint. */
function resendDeliveriesCommand(endpoints: Command): void {
  kit.examples(
    endpoints
      .command("resend-deliveries")
      .description(
        "queue up to 100 chosen deliveries again, each to its own endpoint: one result per id (queued, already_pending, or the error)",
      )
      .argument("<ids...>", "delivery ids (dlv_…), at most 100")
      .action(runResendDeliveries),
    "deskline webhooks endpoints resend-deliveries dlv_2bXkqB4cD6eF8gHj dlv_2bXkt7NoP1qR3sTv",
    "deskline webhooks endpoints deliveries we_0VbeYBCu9tPuFypVLWBsJN --status failed --json | jq -r .id | xargs deskline webhooks endpoints resend-deliveries",
  );
}

type ResendResult = components["schemas"]["WebhookDeliveryResendItemResult"];
const RESEND_COLUMNS: Column<ResendResult>[] = [
  { header: "ID", value: (r) => r.id },
  { header: "STATUS", value: (r) => r.status },
  { header: "NEW DELIVERY", value: (r) => ("delivery" in r ? (r.delivery?.id ?? null) : null) },
  { header: "ERROR", value: (r) => ("error" in r ? `${r.error.code}: ${r.error.message}` : null) },
];

async function runResendDeliveries(ids: string[], _options: unknown, command: Command): Promise<void> {
  const deskline = await clientFor(command);
  const answer = await guided(deskline.webhookEndpoints.resendDeliveries({ ids }), {});
  if (globalsOf(command).json) for (const result of answer.data) writeLine(JSON.stringify(result));
  else writeLine(formatTable(answer.data, RESEND_COLUMNS));
  // Some ids refused: exit 1 for scripts, with nothing more to print (the rows say which).
  if (answer.data.some((r) => r.status === "error")) throw new PartialFailure();
}

async function runStats(id: string, _options: unknown, command: Command): Promise<void> {
  const deskline = await clientFor(command);
  printObject(await deskline.webhookEndpoints.stats(id), Boolean(globalsOf(command).json));
}

async function runRecovery(id: string, options: { wait?: boolean }, command: Command): Promise<void> {
  const deskline = await clientFor(command);
  const recovery = options.wait
    ? await waitForRecovery(deskline, id)
    : await deskline.webhookEndpoints.getRecovery(id);
  printObject(recovery, Boolean(globalsOf(command).json));
}
