// `deskline <contacts|tickets> search`: the search API from the command line, every page printed
// like a list (a table, or JSON Lines with --json).
import type { Deskline, SearchFilter } from "@deskline/sdk";
import type { Command } from "commander";
import { clientFor } from "../context.js";
import { UsageError } from "../errors.js";
import type { Column } from "../output.js";
import { type Condition, filterGroupsOf, type WhereFields } from "../search/where.js";
import { examples, listCommand, pageSize, positiveInteger } from "./kit.js";

/** What one resource's `search` needs: its columns, its fields' types, and how to call it. */
export interface SearchCommand<T> {
  noun: string;
  columns: readonly Column<T>[];
  fields: WhereFields;
  /** Contacts take `--query` (word prefixes). */
  query?: boolean;
  /**
   * The call. The body's field names are the user's, so each resource's call widens them to its
   * SDK body type: the server checks them, and a wrong one is its 400 naming the field.
   */
  search: (deskline: Deskline, body: SearchBody) => AsyncIterable<T>;
  examples: string[];
}

export interface SearchBody {
  query?: string;
  filter_groups: { filters: SearchFilter<string>[] }[];
  sort?: { field: "created_at" | "updated_at"; direction: "asc" | "desc" };
  limit: number;
}

/** `--sort updated_at`, `--sort created_at:asc`. */
function sortOf(text: string | undefined): SearchBody["sort"] {
  if (text === undefined) return undefined;
  const match = /^(created_at|updated_at)(?::(asc|desc))?$/.exec(text);
  if (!match)
    throw new UsageError(`--sort '${text}': write created_at or updated_at, optionally :asc or :desc.`);
  return {
    field: match[1] as "created_at" | "updated_at",
    direction: (match[2] ?? "desc") as "asc" | "desc",
  };
}

export function searchCommand<T>(parent: Command, what: SearchCommand<T>): void {
  // Both flags append here, in the order given: that order makes the groups.
  const conditions: Condition[] = [];
  const add = (startsGroup: boolean) => (text: string) => {
    conditions.push({ text, startsGroup });
    return conditions.length;
  };
  const command = parent
    .command("search")
    .description(`find ${what.noun} by conditions (ANDed; --or-where starts another group), newest first`)
    .option(
      "-w, --where <condition>",
      "field=value, field!=value, field>=value, or field <operator> value (repeatable)",
      add(false),
    )
    .option(
      "--or-where <condition>",
      "a condition that starts another group: any group may match (repeatable)",
      add(true),
    )
    .option("--sort <field[:direction]>", "created_at (default) or updated_at, :asc or :desc (default)")
    .option("--limit <n>", "at most this many in total (pages automatically)", positiveInteger);
  if (what.query)
    command.option("-q, --query <words>", "word prefixes of name, email and phone, as list --search");
  command.action(async (options, command: Command) => {
    const body: SearchBody = {
      filter_groups: filterGroupsOf(conditions, what.fields),
      limit: pageSize(options.limit),
    };
    const sort = sortOf(options.sort);
    if (sort) body.sort = sort;
    if (options.query !== undefined) body.query = options.query;
    const deskline = await clientFor(command);
    await listCommand(command, what.search(deskline, body), what.columns, options.limit);
  });
  examples(command, ...what.examples);
}
