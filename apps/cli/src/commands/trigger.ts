// `deskline trigger <event-type>`: makes the API emit an event on purpose, to see a receiver
// handle it (with `deskline listen` forwarding it). Stripe's `stripe trigger`.

import type { Command } from "commander";
import { ADMIN_TOKEN_VARIABLE, adminClient, dataOf } from "../admin.js";
import { resolveSettings } from "../config.js";
import { clientFor, globalsOf } from "../context.js";
import { UsageError } from "../errors.js";
import { formatTable, printObject, writeLine } from "../output.js";
import { RECIPES, type Recipe, type TriggerContext } from "../trigger/recipes.js";
import { examples } from "./kit.js";

export function register(trigger: Command): void {
  examples(
    trigger
      .argument("[event-type]", `one of: ${RECIPES.map((r) => r.type).join(", ")}`)
      .option("--list", "list the event types it can trigger, and what each creates")
      .addHelpText(
        "after",
        `\nmessage.received and conversation.assigned need $${ADMIN_TOKEN_VARIABLE} (the server's ADMIN_TOKEN).` +
          "\nwebhook_endpoint.recovered needs a receiver that fails, then answers: not triggered here.",
      )
      .action(runTrigger),
    "deskline trigger ticket.updated",
    "DESKLINE_ADMIN_TOKEN=… deskline trigger message.received --json",
    "deskline trigger --list",
  );
}

function printRecipes(json: boolean): void {
  if (json) {
    for (const r of RECIPES)
      writeLine(JSON.stringify({ type: r.type, summary: r.summary, admin: r.needsAdmin }));
    return;
  }
  writeLine(
    formatTable(RECIPES, [
      { header: "EVENT", value: (r: Recipe) => r.type },
      { header: "CREATES", value: (r: Recipe) => r.summary },
    ]),
  );
}

async function contextFor(command: Command, recipe: Recipe): Promise<TriggerContext> {
  const { baseUrl, apiKey } = resolveSettings(globalsOf(command));
  // Checked before anything is created, so a missing token leaves no half-made fixture behind.
  const client = recipe.needsAdmin ? adminClient(baseUrl) : undefined;
  const deskline = await clientFor(command);
  let workspace: Promise<string> | undefined;
  return {
    deskline,
    admin: async () => {
      if (!client) throw new Error(`${recipe.type} was not expected to need the admin API`);
      // The admin API works on workspaces; the key knows its own (introspection).
      workspace ??= client
        .POST("/admin/v1/api-keys/introspect", { body: { key: apiKey as string } })
        .then((result) => dataOf(result).workspace_id);
      return { client, workspaceId: await workspace };
    },
  };
}

async function runTrigger(type: string | undefined, options: { list?: boolean }, command: Command) {
  const json = Boolean(globalsOf(command).json);
  if (options.list) return printRecipes(json);
  if (!type) throw new UsageError(`give an event type (${RECIPES.map((r) => r.type).join(", ")}) or --list`);
  const recipe = RECIPES.find((r) => r.type === type);
  if (!recipe) {
    throw new UsageError(`cannot trigger '${type}'; one of: ${RECIPES.map((r) => r.type).join(", ")}`);
  }
  const created = await recipe.run(await contextFor(command, recipe));
  printObject(json ? { type: recipe.type, ...created } : { triggered: recipe.type, ...created }, json);
}
