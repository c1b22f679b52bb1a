// `pnpm build`'s last step (`node dist/spec/write-prebuilt.js`): loads both spec files the slow
// way and keeps them beside the built code (prebuilt.ts says why).
import { readFileSync } from "node:fs";
import { parseSpecFile, SPEC_FILES, specPath } from "./documents.js";
import { digestOf, writePrebuilt } from "./prebuilt.js";

for (const file of SPEC_FILES) {
  const text = readFileSync(specPath(file), "utf8");
  writePrebuilt(file, { digest: digestOf(text), ...(await parseSpecFile(file, text)) });
}
