// What every command gets from the program: the global flags and an SDK client built from the
// resolved settings, created only when a command first needs it (so `config` and `--help` work
// without a key).

import type { Deskline } from "@deskline/sdk";
import type { Command } from "commander";
import { type GlobalFlags, MISSING_KEY_MESSAGE, resolveSettings } from "./config.js";
import { UsageError } from "./errors.js";

export interface GlobalOptions extends GlobalFlags {
  json?: boolean;
}

export interface ClientOptions {
  /** Retries per request; imports raise it to ride out rate limits. */
  maxRetries?: number;
}

/** The global flags, wherever on the command line they were given. */
export const globalsOf = (command: Command): GlobalOptions => command.optsWithGlobals() as GlobalOptions;

export async function clientFor(command: Command, options: ClientOptions = {}): Promise<Deskline> {
  const settings = resolveSettings(globalsOf(command));
  if (!settings.apiKey) throw new UsageError(MISSING_KEY_MESSAGE);
  const { Deskline } = await import("@deskline/sdk");
  return new Deskline({ apiKey: settings.apiKey, baseUrl: settings.baseUrl, maxRetries: options.maxRetries });
}
