// `deskline listen --forward-to <url>`: local webhook development without a public HTTPS
// endpoint (Stripe's `stripe listen`). Follows the events API and forwards each event, signed
// with a local secret, to a receiver on the developer's machine.

import type { Deskline, DesklineEvent, EventType } from "@deskline/sdk";
import { type Command, Option } from "commander";
import { MISSING_KEY_MESSAGE, resolveSettings } from "../config.js";
import { clientFor, globalsOf } from "../context.js";
import { UsageError } from "../errors.js";
import { eventTypeSchema, webhookEndpointSigningSchema } from "../generated/schemas.js";
import { type Cursor, markHandled } from "../listen/cursor.js";
import { followEvents } from "../listen/follow.js";
import { type ForwardResult, forwardEvent } from "../listen/forward.js";
import { startingPoint } from "../listen/start.js";
import { ListenState, loadCursor, saveCursor } from "../listen/state.js";
import { writeLine } from "../output.js";
import { terminal } from "../terminal.js";
import { examples } from "./kit.js";

const EVENT_TYPES = eventTypeSchema.enum as readonly EventType[];

type Signing = (typeof webhookEndpointSigningSchema.enum)[number];

interface ListenOptions {
  forwardTo?: string;
  signing: Signing;
  events?: string[];
  printSecret?: boolean;
  since?: string;
  state?: string;
}

/** `--events a,b --events c` → [a, b, c]; `*` (or nothing) means every type. */
const collectTypes = (value: string, previous: string[] = []) => [
  ...previous,
  ...value
    .split(",")
    .map((type) => type.trim())
    .filter(Boolean),
];

function eventTypesOf(values: readonly string[] = []): EventType[] {
  const unknown = values.filter((type) => type !== "*" && !EVENT_TYPES.includes(type as EventType));
  if (unknown.length) {
    throw new UsageError(`unknown event type ${unknown.join(", ")}; types: ${EVENT_TYPES.join(", ")}`);
  }
  return values.includes("*") ? [] : [...new Set(values as EventType[])];
}

function forwardUrlOf(value: string): string {
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`);
  } catch {
    throw new UsageError(`--forward-to '${value}' is not a URL (e.g. http://localhost:4000/webhooks)`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`--forward-to '${value}' must be http: or https:`);
  }
  return url.href;
}

export function register(listen: Command): void {
  examples(
    listen
      .option("-f, --forward-to <url>", "your local receiver, e.g. http://localhost:4000/webhooks")
      .option(
        "-e, --events <types>",
        "only these event types (comma-separated, repeatable; default all)",
        collectTypes,
      )
      .addOption(
        new Option(
          "--signing <scheme>",
          "sign as an endpoint of this scheme does (ed25519: v1a, with a key pair)",
        )
          .choices(webhookEndpointSigningSchema.enum)
          .default("hmac_sha256"),
      )
      .option(
        "--print-secret",
        "print what your receiver verifies with and exit (for scripts): the local secret, or with --signing ed25519 the public key",
      )
      .option(
        "--since <when>",
        "start here instead of where the last run stopped: now, an event id, Unix seconds or RFC 3339",
      )
      .option("--state <file>", "where to keep the position for resuming (default: in the state directory)")
      .addHelpText(
        "after",
        [
          "",
          "Each event is POSTed with the body bytes and headers a webhook delivery carries",
          "(Service-Signature, Service-Event, Service-Delivery, User-Agent, webhook-id,",
          "webhook-timestamp, webhook-signature), signed with a local secret that stays the same",
          "for this server and API key; with --signing ed25519, with a local Ed25519 key pair",
          "(v1a signatures) whose public key your receiver verifies with. A stopped listener resumes where it stopped, so a",
          "restart misses nothing. A receiver that is down is retried 3 times, then reported.",
          "Needs a key with webhooks:manage (it reads the events API).",
        ].join("\n"),
      )
      .action((options: ListenOptions, command: Command) => runListen(command, options)),
    "deskline listen --forward-to localhost:4000/webhooks",
    "deskline listen --forward-to http://localhost:4000/webhooks --events ticket.created,ticket.updated --json",
    "export DESKLINE_WEBHOOK_SECRET=$(deskline listen --print-secret)",
    "export DESKLINE_WEBHOOK_PUBLIC_KEY=$(deskline listen --signing ed25519 --print-secret)",
  );
}

async function runListen(command: Command, options: ListenOptions): Promise<void> {
  const globals = globalsOf(command);
  const json = Boolean(globals.json);
  const settings = resolveSettings(globals);
  if (!settings.apiKey) throw new UsageError(MISSING_KEY_MESSAGE);
  const state = new ListenState(settings.baseUrl, settings.apiKey);
  // `secret` signs; `shown` is what the receiver verifies with (the same for HMAC).
  const pair = options.signing === "ed25519" ? state.keyPair() : undefined;
  const secret = pair?.secretKey ?? state.secret();
  const shown = pair?.publicKey ?? secret;
  if (options.printSecret) return writeLine(shown);
  if (!options.forwardTo) throw new UsageError("give --forward-to <url> (or --print-secret)");
  const forwardTo = forwardUrlOf(options.forwardTo);
  const types = eventTypesOf(options.events);
  const deskline = await clientFor(command);
  const cursorPath = options.state ?? state.cursorPath(forwardTo);
  const start = await startingPoint(deskline, options.since, loadCursor(cursorPath));
  saveCursor(cursorPath, forwardTo, start.cursor);

  // Ctrl-C (or a SIGTERM) ends the follow and any attempt in flight; the cursor is saved after
  // every event, so what was handled stays handled and the interrupted event comes again next run.
  const stop = new AbortController();
  const onSignal = () => stop.abort(new Error("stopped"));
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  const info = (line: string) => (json ? terminal().stderr.write(`${line}\n`) : writeLine(line));
  info(
    `Ready. Forwarding ${types.length ? types.join(", ") : "all events"} to ${forwardTo}, ${start.description}.`,
  );
  info(`Your webhook ${pair ? "public key" : "signing secret"} is ${shown} (^C to quit)`);
  try {
    await forwardAll(
      deskline,
      { types, forwardTo, secret, cursorPath, json, signal: stop.signal },
      start.cursor,
    );
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
  terminal().stderr.write("Stopped.\n");
}

/** Where and how `listen` forwards, once its flags are checked. */
interface Forwarding {
  types: EventType[];
  forwardTo: string;
  secret: string;
  cursorPath: string;
  json: boolean;
  signal: AbortSignal;
}

/** Follows the events from `cursor` and forwards each, saving the cursor after each, until stopped. */
async function forwardAll(deskline: Deskline, to: Forwarding, from: Cursor): Promise<void> {
  let cursor = from;
  let apiDown = false;
  const batches = followEvents(deskline, () => cursor, {
    types: to.types,
    signal: to.signal,
    onPollError: (error) => {
      if (!apiDown)
        terminal().stderr.write(`events API: ${(error as Error).message}; retrying every second\n`);
      apiDown = true;
    },
    onPollOk: () => {
      if (apiDown) terminal().stderr.write("events API: reachable again\n");
      apiDown = false;
    },
  });
  for await (const batch of batches) {
    for (const event of batch) {
      const result = await forward(event, to.forwardTo, to.secret, to.signal);
      if (!result) break;
      writeLine(to.json ? JSON.stringify(jsonLine(event, result)) : humanLine(event, result));
      cursor = markHandled(cursor, event);
      saveCursor(to.cursorPath, to.forwardTo, cursor);
    }
  }
}

/** Forwards one event; undefined when Ctrl-C interrupted it. */
async function forward(
  event: DesklineEvent,
  url: string,
  secret: string,
  signal: AbortSignal,
): Promise<ForwardResult | undefined> {
  try {
    return await forwardEvent(
      // The events API answers each event as stored, and JSON.stringify gives back exactly the
      // stored bytes (they were made by it), so this is the body a delivery carries.
      { url, payload: JSON.stringify(event), eventId: event.id, eventType: event.type, secret },
      {
        signal,
        onRetry: (failure, attempt, delayMs) =>
          terminal().stderr.write(
            `${event.id} -> ${url}: ${failure}; retry ${attempt} of 3 in ${delayMs / 1000} s\n`,
          ),
      },
    );
  } catch (error) {
    if (signal.aborted) return undefined;
    throw error;
  }
}

const timeOf = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, "Z");

function humanLine(event: DesklineEvent, result: ForwardResult): string {
  const outcome =
    result.status === null
      ? `failed: ${result.error} (${result.attempts} attempts)`
      : `${result.status}  ${result.durationMs} ms`;
  return `${timeOf(new Date())}  ${event.type.padEnd(26)}  ${event.id}  ${outcome}`;
}

function jsonLine(event: DesklineEvent, result: ForwardResult) {
  return {
    id: event.id,
    type: event.type,
    created: event.created,
    forwarded_at: new Date().toISOString(),
    status: result.status,
    duration_ms: result.durationMs,
    attempts: result.attempts,
    error: result.error,
  };
}
