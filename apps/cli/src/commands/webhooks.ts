// `deskline webhooks endpoints …`: register, list and remove the HTTPS endpoints that receive events.

import type { EventType, WebhookEndpoint } from "@deskline/sdk";
import type { Command } from "commander";
import { clientFor, globalsOf } from "../context.js";
import { catalogOf } from "../fields.js";
import { webhookEndpointUpdateSchema } from "../generated/schemas.js";
import { type Column, printObject } from "../output.js";
import {
  addBodyOptions,
  bodyOf,
  deleteCommand,
  examples,
  getCommand,
  listCommand,
  pageSize,
  positiveInteger,
} from "./kit.js";

const COLUMNS: Column<WebhookEndpoint>[] = [
  { header: "ID", value: (e) => e.id },
  { header: "STATUS", value: (e) => e.status },
  { header: "URL", value: (e) => e.url },
  { header: "EVENTS", value: (e) => e.events },
  { header: "DESCRIPTION", value: (e) => e.description },
];

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function register(webhooks: Command): void {
  examples(webhooks, "deskline webhooks endpoints list");
  const endpoints = webhooks
    .command("endpoints")
    .description("webhook endpoints: list, create, get, update, rotate-secret, delete");
  examples(
    endpoints,
    "deskline webhooks endpoints create --url https://hooks.example.com/deskline --event ticket.updated",
  );

  examples(
    endpoints
      .command("list")
      .description("list webhook endpoints (secrets are never listed)")
      .option("--limit <n>", "at most this many in total", positiveInteger)
      .action(async (options: { limit?: number }, command: Command) => {
        const deskline = await clientFor(command);
        await listCommand(
          command,
          deskline.webhookEndpoints.list({ limit: pageSize(options.limit) } as never),
          COLUMNS,
          options.limit,
        );
      }),
    "deskline webhooks endpoints list --json",
  );

  examples(
    endpoints
      .command("create")
      .description("register an endpoint; prints its signing secret, which is shown this once")
      .requiredOption("--url <url>", "HTTPS URL that receives the events")
      .option("--description <text>", "what the endpoint is for")
      .option("--event <type>", "an event type to receive (repeatable; default: all)", collect)
      .action(async (options: { url: string; description?: string; event?: string[] }, command: Command) => {
        const deskline = await clientFor(command);
        const created = await deskline.webhookEndpoints.create({
          url: options.url,
          ...(options.description ? { description: options.description } : {}),
          ...(options.event ? { events: options.event as EventType[] } : {}),
        });
        printObject(created, Boolean(globalsOf(command).json));
      }),
    "deskline webhooks endpoints create --url https://hooks.example.com/deskline --event contact.created --event contact.updated",
  );

  getCommand(
    endpoints,
    {
      noun: "webhook endpoint",
      id: "we",
      example: "deskline webhooks endpoints get we_0VbeYBCu9tPuFypVLWBsJN",
    },
    (d, id) => d.webhookEndpoints.get(id),
  );

  examples(
    addBodyOptions(
      endpoints
        .command("update")
        .description("change an endpoint (url, description, events…)")
        .argument("<id>", "endpoint id"),
    ).action(async (id: string, options, command: Command) => {
      const deskline = await clientFor(command);
      const body = bodyOf(options, catalogOf(webhookEndpointUpdateSchema));
      printObject(
        await deskline.webhookEndpoints.update(id, body as never),
        Boolean(globalsOf(command).json),
      );
    }),
    "deskline webhooks endpoints update we_0VbeYBCu9tPuFypVLWBsJN --set description='CRM sync' --set 'events=ticket.created;ticket.updated'",
  );

  examples(
    endpoints
      .command("rotate-secret")
      .description(
        "make a new signing secret (printed this once); the old one stays valid for --expires-in seconds",
      )
      .argument("<id>", "endpoint id")
      .option(
        "--expires-in <seconds>",
        "grace period of the old secret (0: stop using it now)",
        positiveInteger,
      )
      .action(async (id: string, options: { expiresIn?: number }, command: Command) => {
        const deskline = await clientFor(command);
        const body = options.expiresIn === undefined ? {} : { expires_in: options.expiresIn };
        printObject(await deskline.webhookEndpoints.rotateSecret(id, body), Boolean(globalsOf(command).json));
      }),
    "deskline webhooks endpoints rotate-secret we_0VbeYBCu9tPuFypVLWBsJN --expires-in 3600",
  );

  deleteCommand(
    endpoints,
    {
      noun: "webhook endpoint",
      id: "we",
      example: "deskline webhooks endpoints delete we_0VbeYBCu9tPuFypVLWBsJN",
    },
    (d, id) => d.webhookEndpoints.delete(id),
  );
}
