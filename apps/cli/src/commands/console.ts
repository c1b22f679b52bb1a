// `deskline console`: a one-time link to the webhook console for the key's own workspace, for
// whoever lost the one `pnpm start` printed or never had an operator's (needs webhooks:manage,
// no admin token).

import type { Command } from "commander";
import { clientFor, globalsOf } from "../context.js";
import { UsageError } from "../errors.js";
import { writeLine } from "../output.js";
import { examples } from "./kit.js";

export function register(consoleCommand: Command): void {
  examples(
    consoleCommand
      .option(
        "--expires-in <seconds>",
        "how long the session lasts from now (60 to 86400; default the server's, 1 hour)",
      )
      .addHelpText(
        "after",
        [
          "",
          "The link works once, for 10 minutes; the session it opens ends at expires_at, counted",
          "from now, not from when the link is opened. Needs a key with webhooks:manage.",
        ].join("\n"),
      )
      .action((options: { expiresIn?: string }, command: Command) => runConsole(options, command)),
    "deskline console",
    "deskline console --json | jq -r .url",
  );
}

async function runConsole(options: { expiresIn?: string }, command: Command): Promise<void> {
  const expiresIn = options.expiresIn === undefined ? undefined : Number(options.expiresIn);
  if (expiresIn !== undefined && !Number.isInteger(expiresIn)) {
    throw new UsageError(`--expires-in takes whole seconds (60 to 86400), got '${options.expiresIn}'`);
  }
  const deskline = await clientFor(command);
  const link = await deskline.consoleLinks.create(expiresIn === undefined ? {} : { expires_in: expiresIn });
  if (globalsOf(command).json) {
    writeLine(JSON.stringify({ url: link.url, expires_at: link.expires_at }));
    return;
  }
  writeLine(link.url);
  writeLine(`Open it by ${link.link_expires_at} (it works once); the session ends at ${link.expires_at}.`);
}
