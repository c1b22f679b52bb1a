// Every way the CLI can end, and the one place that turns it into an exit code and a message on
// stderr (changesets' cli/src/index.ts): 0 ok, 1 an API error or a partial failure, 2 a usage error.

import { DesklineError } from "@deskline/sdk";
import { CommanderError } from "commander";

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** The command line was wrong (a missing key, an unknown column, a bad flag): exit 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/**
 * The command ran, reported what it did, and part of it failed (a bad row, a refused ticket):
 * exit 1 with nothing more to print, since the command's own summary said it.
 */
export class PartialFailure extends Error {
  override name = "PartialFailure";
}

/**
 * An API error the command foresaw, with what to do next (a disabled endpoint: enable it first).
 * Reported like any API error, plus the hint (`hint` in `--json`).
 */
export class GuidedError extends Error {
  override name = "GuidedError";
  constructor(
    readonly error: DesklineError,
    readonly hint: string,
  ) {
    super(error.message);
  }
}

export interface ErrorReport {
  exitCode: number;
  /** Lines for stderr; empty when the command already reported. */
  lines: string[];
}

/** How an error thrown by any command ends the process. */
export function reportError(error: unknown, json: boolean): ErrorReport {
  if (error instanceof PartialFailure) return { exitCode: EXIT_FAILURE, lines: [] };
  if (error instanceof CommanderError) {
    // Commander has printed its own message (or the help) already.
    const helpShown = error.code === "commander.helpDisplayed" || error.code === "commander.version";
    return { exitCode: helpShown || error.exitCode === 0 ? EXIT_OK : EXIT_USAGE, lines: [] };
  }
  if (error instanceof UsageError) {
    return {
      exitCode: EXIT_USAGE,
      lines: [json ? errorJson("usage_error", error.message) : `error: ${error.message}`],
    };
  }
  if (error instanceof DesklineError) return { exitCode: EXIT_FAILURE, lines: apiErrorLines(error, json) };
  if (error instanceof GuidedError) {
    return { exitCode: EXIT_FAILURE, lines: apiErrorLines(error.error, json, error.hint) };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { exitCode: EXIT_FAILURE, lines: [json ? errorJson("cli_error", message) : `error: ${message}`] };
}

/**
 * An API error as the user needs it: what happened, its stable code, the id to quote to support,
 * and, when the command knows it, what to do next.
 */
export function apiErrorLines(error: DesklineError, json: boolean, hint?: string): string[] {
  if (json) {
    return [
      JSON.stringify({
        error: {
          status: error.status ?? null,
          code: error.code ?? null,
          message: error.message,
          param: error.param ?? null,
          request_id: error.requestId ?? null,
          ...(hint ? { hint } : {}),
        },
      }),
    ];
  }
  const lines = [`error: ${error.message}`];
  const details = [
    error.status === undefined ? undefined : `status ${error.status}`,
    error.code && `code ${error.code}`,
    error.param && `param ${error.param}`,
    error.requestId && `request id ${error.requestId}`,
  ].filter(Boolean);
  if (details.length > 0) lines.push(`  (${details.join(", ")})`);
  if (hint) lines.push(`  ${hint}`);
  return lines;
}

function errorJson(code: string, message: string): string {
  return JSON.stringify({ error: { code, message } });
}

/** The message of an API error in one line, for row and ticket reports. */
export function describeError(error: unknown): { code: string | undefined; reason: string } {
  if (error instanceof DesklineError) {
    const where = error.requestId ? ` (request ${error.requestId})` : "";
    return { code: error.code, reason: `${error.message}${where}` };
  }
  return { code: undefined, reason: error instanceof Error ? error.message : String(error) };
}
