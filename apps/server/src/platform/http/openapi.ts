import { dereferenceSpec, type Json, readSpecDocument, type SpecDocument } from "../../spec/documents.js";
import { listOperations, type OperationSpec } from "../../spec/operations.js";
import { createRequestValidators, type RequestValidators } from "../../spec/validators.js";

/** An operation of the spec with the validators compiled from its schemas. */
export interface Operation extends OperationSpec, RequestValidators {}

/** The loaded spec: what the router mounts and validates with, and the documents it serves. */
export interface OpenApi {
  operations: Map<string, Operation>;
  documents: { public: SpecDocument; admin: SpecDocument };
  /** The public spec with every `$ref` resolved (the event catalog reads its `webhooks`, events/catalog.ts). */
  dereferenced: Json;
}

/** Loads both spec files and compiles a validator for every request shape; no shape is written twice. */
export async function loadOpenApi(): Promise<OpenApi> {
  const compile = createRequestValidators();
  const operations = new Map<string, Operation>();
  const dereferenced = {
    "openapi.yaml": await dereferenceSpec("openapi.yaml"),
    "admin.yaml": await dereferenceSpec("admin.yaml"),
  };
  for (const file of ["openapi.yaml", "admin.yaml"] as const) {
    for (const operation of listOperations(dereferenced[file])) {
      if (operations.has(operation.operationId)) {
        throw new Error(`operationId ${operation.operationId} appears twice in the spec`);
      }
      operations.set(operation.operationId, { ...operation, ...compile(operation) });
    }
  }
  return {
    operations,
    documents: { public: readSpecDocument("openapi.yaml"), admin: readSpecDocument("admin.yaml") },
    dereferenced: dereferenced["openapi.yaml"],
  };
}
