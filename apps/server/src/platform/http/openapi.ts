import { type Json, loadSpecFile, type SpecDocument } from "../../spec/documents.js";
import { listOperations, type OperationSpec } from "../../spec/operations.js";
import { createRequestValidators, type RequestValidators } from "../../spec/validators.js";

/** An operation of the spec with the validators compiled from its schemas. */
export interface Operation extends OperationSpec, RequestValidators {}

/** The loaded spec: what the router mounts and validates with, and the documents it serves. */
export interface OpenApi {
  operations: Map<string, Operation>;
  /** The admin file also as one self-contained document (for the browser's renderer, docs/routes.ts). */
  documents: { public: SpecDocument; admin: SpecDocument & { bundled: Json } };
  /** The public spec with every `$ref` resolved (the event catalog reads its `webhooks`, events/catalog.ts). */
  dereferenced: Json;
}

let loaded: Promise<OpenApi> | undefined;

/**
 * The spec, loaded once per process: the files do not change while it runs, and reading them
 * from the YAML costs about half a second of CPU (what the build kept, much less; see
 * src/spec/prebuilt.ts), which every server a process starts (the tests start many in one
 * process) would pay again. What it returns is shared, so it is frozen: nothing may write into a
 * spec document or an operation.
 */
export function loadOpenApi(): Promise<OpenApi> {
  loaded ??= compileOpenApi().catch((error: unknown) => {
    loaded = undefined; // a failed load (a spec Redocly refuses) is not kept: the next start reads again
    throw error;
  });
  return loaded;
}

/** Loads both spec files and compiles a validator for every request shape; no shape is written twice. */
async function compileOpenApi(): Promise<OpenApi> {
  const compile = createRequestValidators();
  const operations = new Map<string, Operation>();
  const [open, admin] = await Promise.all([loadSpecFile("openapi.yaml"), loadSpecFile("admin.yaml")]);
  for (const { dereferenced } of [open, admin]) {
    for (const operation of listOperations(dereferenced)) {
      if (operations.has(operation.operationId)) {
        throw new Error(`operationId ${operation.operationId} appears twice in the spec`);
      }
      operations.set(operation.operationId, compile(operation));
    }
  }
  const documents = {
    public: { text: open.text, json: open.json },
    admin: { text: admin.text, json: admin.json, bundled: admin.bundled },
  };
  deepFreeze(documents);
  deepFreeze(open.dereferenced);
  deepFreeze(admin.dereferenced);
  return { operations, documents, dereferenced: open.dereferenced };
}

/** Freezes a parsed document all the way down (JSON: objects and arrays only, no cycles but shared parts). */
function deepFreeze(value: unknown): void {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
}
