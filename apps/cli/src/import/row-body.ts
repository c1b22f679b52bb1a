// From a row as read (CSV cells or a JSON object) to the body of a contact create: names mapped
// by --map, then placed by the spec's field kinds (lists split, booleans read, `custom_fields.x`
// keys). An empty CSV cell means "no value here", never "clear it"; a cell an export escaped
// against spreadsheet formulas (`'=…`) reads back without its `'`.

import { UsageError } from "../errors.js";
import { unescapeFormula } from "../export/formula-cells.js";
import { assign, type ColumnPlan, type FieldCatalog, planColumn, unknownColumnsMessage } from "../fields.js";
import { type CustomFieldTypes, readCell } from "./custom-field-cells.js";
import type { SourceRow } from "./read-rows.js";

export type RowBody = { body: Record<string, unknown> } | { error: string };

export class RowMapper {
  readonly #plans = new Map<string, ColumnPlan | { source: string; unknown: true }>();
  /** The workspace's custom field types: a CSV cell of a defined key is read as its type. */
  customFieldTypes: CustomFieldTypes = new Map();

  constructor(
    private readonly catalog: FieldCatalog,
    private readonly renames: Map<string, string>,
  ) {}

  /** Checks a CSV header once: an unknown column stops the import before any row is sent. */
  checkHeader(header: readonly string[]): void {
    const unknown = header.filter((name) => "unknown" in this.#plan(name));
    if (unknown.length > 0) throw new UsageError(unknownColumnsMessage(unknown, this.catalog));
    const targets = header.map((name) => this.#plan(name)).filter((plan) => "target" in plan && plan.target);
    const seen = new Set<string>();
    for (const plan of targets as ColumnPlan[]) {
      const key = `${plan.target?.field}.${plan.target?.key ?? ""}`;
      if (seen.has(key))
        throw new UsageError(
          `two columns map to ${plan.target?.field}${plan.target?.key ? `.${plan.target.key}` : ""}`,
        );
      seen.add(key);
    }
  }

  /** Whether the header has a column that fills a custom field (the types are then worth reading). */
  fillsCustomFields(header: readonly string[]): boolean {
    return header.some((name) => {
      const plan = this.#plan(name);
      return "target" in plan && plan.target?.field === "custom_fields";
    });
  }

  #plan(name: string) {
    let plan = this.#plans.get(name);
    if (!plan) {
      plan = planColumn(name, this.renames, this.catalog);
      // JSON rows may carry any key; cap the cache so a file of ever-new keys cannot grow it.
      if (this.#plans.size < 10_000) this.#plans.set(name, plan);
    }
    return plan;
  }

  bodyOf(row: SourceRow, fromText: boolean): RowBody {
    if (row.error || !row.values) return { error: row.error ?? "empty row" };
    const body: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(row.values)) {
      if (fromText && (value === "" || value === undefined)) continue;
      const plan = this.#plan(name);
      if ("unknown" in plan) return { error: `${name}: unknown field` };
      if (!plan.target) continue;
      // A cell an export escaped against formulas reads back to its value (export/formula-cells.ts).
      const text = fromText && typeof value === "string" ? unescapeFormula(value.trim()) : value;
      const { field, key } = plan.target;
      if (fromText && field === "custom_fields" && key !== undefined && typeof text === "string") {
        const cell = readCell(this.customFieldTypes.get(key), key, text);
        if ("error" in cell) return cell;
        assign(body, plan.target, cell.value, this.catalog);
      } else assign(body, plan.target, text, this.catalog);
    }
    return { body };
  }
}
