import { fileURLToPath } from "node:url";
import { dereference } from "@apidevtools/json-schema-ref-parser";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";

/**
 * The tests' own reading of the spec, to check the server's answers against. It shares nothing
 * with the server's loader (src/spec/): another library resolves the `$ref`s, another Ajv
 * compiles the schemas, the custom formats are checked another way, so a bug in the server's
 * reading of the spec cannot hide on both sides.
 */

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

type Json = Record<string, any>;

export interface SpecOperation {
  operationId: string;
  method: string;
  path: string;
  responses: Json;
  /** The error codes the operation may answer (its `x-error-codes`). */
  errorCodes: string[];
  /** The JSON Schema of its `application/json` request body, if it takes one. */
  bodySchema: Json | undefined;
  /** Which spec document it comes from. */
  file: SpecFile;
  /** The operation as the spec writes it, `$ref`s resolved (security, parameters, examples…). */
  definition: Json;
  /** Whether a request to `path` (a concrete path, e.g. `/open/v1/contacts/con_1`) is this operation. */
  matches(method: string, path: string): boolean;
}

const METHODS = ["get", "post", "put", "patch", "delete"];

type SpecFile = "openapi.yaml" | "admin.yaml";

const readSpec = async (file: SpecFile) =>
  (await dereference(fileURLToPath(new URL(`../../../../spec/${file}`, import.meta.url)))) as Json;
const specs = { "openapi.yaml": await readSpec("openapi.yaml"), "admin.yaml": await readSpec("admin.yaml") };

function operationsOf(file: SpecFile): SpecOperation[] {
  const spec = specs[file];
  const out: SpecOperation[] = [];
  for (const [path, item] of Object.entries(spec.paths as Json)) {
    for (const method of METHODS) {
      const operation = (item as Json)[method];
      if (!operation) continue;
      const pattern = new RegExp(`^${path.replace(/\{\w+\}/g, "[^/]+")}$`);
      out.push({
        operationId: operation.operationId,
        method: method.toUpperCase(),
        path,
        responses: operation.responses,
        errorCodes: operation["x-error-codes"] ?? [],
        bodySchema: operation.requestBody?.content?.["application/json"]?.schema,
        file,
        definition: { ...operation, security: operation.security ?? spec.security },
        matches: (m, p) => m === method.toUpperCase() && pattern.test(p),
      });
    }
  }
  return out;
}

function createAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  return ajv;
}

export const specOperations = [...operationsOf("openapi.yaml"), ...operationsOf("admin.yaml")];

/** Every API key scope, as the admin spec's `Scope` enum lists them. */
export const specScopes: string[] = specs["admin.yaml"].components.schemas.Scope.enum;
const ajv = createAjv();
const validators = new Map<string, ValidateFunction | undefined>();

export function findOperation(method: string, path: string): SpecOperation | undefined {
  return specOperations.find((operation) => operation.matches(method, path));
}

/** The validator of the JSON body the spec gives for (operation, status); throws for an undocumented status. */
export function responseValidator(operation: SpecOperation, status: number): ValidateFunction | undefined {
  const key = `${operation.operationId} ${status}`;
  if (!validators.has(key)) {
    const response = operation.responses[String(status)] ?? operation.responses.default;
    if (!response) throw new Error(`${operation.operationId} does not document status ${status}`);
    const schema = response.content?.["application/json"]?.schema;
    validators.set(key, schema ? ajv.compile(schema) : undefined);
  }
  return validators.get(key);
}
