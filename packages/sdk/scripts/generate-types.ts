// Regenerates src/generated/openapi.ts from spec/openapi.yaml, the one source of every path,
// parameter, body and response type. `--check` fails (exit 1) when the committed file is stale; the test suite runs
// the same comparison (test/generated.test.ts).
import { fileURLToPath } from "node:url";
import { renderOpenApiTypes, writeOrCheck } from "../../../scripts/generate-openapi-types.js";

export const OUTPUT = fileURLToPath(new URL("../src/generated/openapi.ts", import.meta.url));
const COMMAND = "pnpm -F @deskline/sdk generate";

/** The file's intended contents, rendered from the spec as it is now. */
export const render = () => renderOpenApiTypes("scripts/generate-types.ts", COMMAND);

if (process.argv[1] === fileURLToPath(import.meta.url)) writeOrCheck(OUTPUT, await render(), COMMAND);
