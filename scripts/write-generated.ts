// The end of every generator script (spec types, the server's values, the CLI's schemas): write
// the files it rendered, or with `--check` in argv report each stale one and exit 1.
import { readFileSync, writeFileSync } from "node:fs";

/** `files`: path → intended contents; `command`: what regenerates them, for the stale message. */
export function writeGenerated(files: Map<string, string>, command: string): void {
  const check = process.argv.includes("--check");
  let stale = false;
  for (const [file, contents] of files) {
    if (!check) {
      writeFileSync(file, contents);
      console.log(`wrote ${file}`);
    } else if (readFileSync(file, "utf8") !== contents) {
      console.error(`${file} is stale: run ${command}`);
      stale = true;
    }
  }
  if (stale) process.exit(1);
}
