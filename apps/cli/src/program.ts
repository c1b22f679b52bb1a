// The `deskline` command tree, kept thin: global flags, and one lazily loaded module per command
// group, so `deskline tickets solve` never loads the CSV parser or the schema validator.
import { Command, Option } from "commander";
import { terminal } from "./terminal.js";
import { VERSION } from "./version.js";

export interface CommandGroup {
  register(command: Command): void;
}

interface GroupEntry {
  summary: string;
  load: () => Promise<CommandGroup>;
  /** The group works on the whole command tree (completion), so every group is loaded with it. */
  loadsEveryGroup?: true;
}

/** The groups, in the order `deskline --help` lists them. */
const GROUPS: Record<string, GroupEntry> = {
  contacts: {
    summary: "import, list, get, create, update and delete contacts",
    load: () => import("./commands/contacts.js"),
  },
  "custom-fields": {
    summary: "define typed custom fields of contacts: list, get, create, update, delete",
    load: () => import("./commands/custom-fields.js"),
  },
  tickets: {
    summary: "solve, close or cancel tickets in bulk; export, list, get, create, update, delete",
    load: () => import("./commands/tickets.js"),
  },
  conversations: {
    summary: "list and read conversations, reply, add internal notes",
    load: () => import("./commands/conversations.js"),
  },
  webhooks: {
    summary: "manage webhook endpoints, see their deliveries, recover what they missed",
    load: () => import("./commands/webhooks.js"),
  },
  events: {
    summary: "list and read the events of the workspace, see where each went, resend one",
    load: () => import("./commands/events.js"),
  },
  listen: {
    summary: "forward the workspace's events to a local webhook receiver, signed",
    load: () => import("./commands/listen.js"),
  },
  trigger: {
    summary: "cause an event on purpose (creates a contact, a ticket, a conversation …)",
    load: () => import("./commands/trigger.js"),
  },
  console: {
    summary: "print a one-time link to the webhook console of the key's workspace",
    load: () => import("./commands/console.js"),
  },
  config: { summary: "API key, base URL and named profiles", load: () => import("./commands/config.js") },
  completion: {
    summary: "print a bash or zsh completion script",
    load: () => import("./commands/completion.js"),
    loadsEveryGroup: true,
  },
};

/** Global flags that take a value, so the group name is not mistaken for one. */
const VALUE_FLAGS = new Set(["--api-key", "--base-url", "--profile"]);

/** The group a command line asks for: its first word that is not a flag (after `help`, the next). */
export function groupIn(args: readonly string[]): string | undefined {
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] as string;
    if (VALUE_FLAGS.has(arg)) index++;
    else if (!arg.startsWith("-") && arg !== "help") return arg;
  }
  return undefined;
}

/**
 * Builds the program for `args` (the words after `deskline`): every group is listed, only the
 * one named is loaded, or every one when that group works on the whole tree (shell completion).
 */
export async function buildProgram(args: readonly string[]): Promise<Command> {
  const program = new Command("deskline")
    .description("The Deskline command line: contact imports, ticket workflows and every API resource.")
    .version(VERSION, "-V, --version")
    .addOption(new Option("--api-key <key>", "API key (default: $DESKLINE_API_KEY, then the profile)"))
    .addOption(
      new Option(
        "--base-url <url>",
        "server address (default: $DESKLINE_BASE_URL, then the profile, then http://127.0.0.1:3000)",
      ),
    )
    .addOption(
      new Option(
        "--profile <name>",
        "named profile of the config file (default: $DESKLINE_PROFILE, then the current one)",
      ),
    )
    .option("--json", "machine-readable output: one JSON object, or JSON Lines for lists")
    // Help, usage errors and --version on the run's terminal (subcommands inherit it). The help's
    // width is still read from the process's stdout, as commander does.
    .configureOutput({
      writeOut: (text) => terminal().stdout.write(text),
      writeErr: (text) => terminal().stderr.write(text),
    })
    .showHelpAfterError("(add --help for usage)")
    .addHelpText(
      "after",
      [
        "",
        "Examples:",
        "  $ deskline config set api-key dsk_…",
        "  $ deskline contacts import contacts.csv --errors rejected.csv",
        "  $ deskline contacts export --tag vip --output vip.csv",
        '  $ deskline tickets solve --status "On you" --tag billing',
        "  $ deskline contacts list --tag vip --json | jq -r .email",
        "",
        "Exit codes: 0 ok, 1 an API error or some rows/tickets failed, 2 a usage error.",
      ].join("\n"),
    );
  const wanted = groupIn(args);
  const all = wanted !== undefined && GROUPS[wanted]?.loadsEveryGroup === true;
  for (const [name, group] of Object.entries(GROUPS)) {
    const command = program.command(name).description(group.summary);
    if (all || name === wanted) (await group.load()).register(command);
  }
  exitOverrideEverywhere(program);
  return program;
}

/** Commander throws instead of exiting, so index.ts decides every exit code. */
function exitOverrideEverywhere(command: Command): void {
  command.exitOverride();
  for (const sub of command.commands) exitOverrideEverywhere(sub);
}
