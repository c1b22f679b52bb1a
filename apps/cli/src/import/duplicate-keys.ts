// Rows of one import file that share a match key (`--match`): each is applied in turn, so the
// contact ends as the last of them says, and a file with one email twice with different values
// flips that contact on every run. Nothing refuses them (the last row winning is what a re-export
// of a CRM means); the import says which lines repeat which, so the file can be fixed.
import { terminal } from "../terminal.js";

/** How many repeats are named one by one; the rest are counted. */
const SHOWN = 20;

export interface DuplicateKey {
  line: number;
  firstLine: number;
  value: string;
}

export class DuplicateKeys {
  private readonly firstLines = new Map<string, number>();
  readonly repeats: DuplicateKey[] = [];

  /** Notes the row at `line` with match key `value` (none: nothing to note). */
  note(line: number, value: string | undefined): void {
    if (value === undefined) return;
    const firstLine = this.firstLines.get(value);
    if (firstLine === undefined) this.firstLines.set(value, line);
    else this.repeats.push({ line, firstLine, value });
  }

  /** Says on stderr which lines repeat a key of an earlier one (nothing when none do). */
  report(matchName: string): void {
    if (this.repeats.length === 0) return;
    const lines = this.repeats
      .slice(0, SHOWN)
      .map((r) => `  line ${r.line}: ${matchName} ${r.value}, as line ${r.firstLine}`);
    const more = this.repeats.length > SHOWN ? [`  … and ${this.repeats.length - SHOWN} more`] : [];
    terminal().stderr.write(
      [
        `warning: ${this.repeats.length} rows repeat the ${matchName} of an earlier row; each was applied in turn, so the last one wins (and the contact changes on every run of this file):`,
        ...lines,
        ...more,
        "",
      ].join("\n"),
    );
  }
}
