import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { parse } from "yaml";

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

export const SPEC_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "../../../../spec");

type Json = Record<string, unknown>;

export interface Operation {
  operationId: string;
  method: string;
  /** The spec's path template, e.g. `/open/v1/contacts/{id}`. */
  path: string;
  /** The one scope the operation needs; undefined for public ones (the spec documents). */
  scope: string | undefined;
  /** Needs a bearer token at all (false for the spec documents). */
  authenticated: boolean;
  validateQuery: ValidateFunction;
  validateBody: ValidateFunction | undefined;
}

export interface SpecDocument {
  text: string;
  json: Json;
}

/** A loaded spec with validators compiled from it; no request shape is written twice by hand. */
export interface OpenApi {
  operations: Map<string, Operation>;
  documents: { public: SpecDocument; admin: SpecDocument };
  /** Validates a response body against the schema the spec gives for (operation, status). */
  responseValidator(operationId: string, status: number): ValidateFunction | undefined;
}

const PUBLIC_ID = "https://deskline.dev/spec/openapi.yaml";
const ADMIN_ID = "https://deskline.dev/spec/admin.yaml";
const METHODS = ["get", "post", "put", "patch", "delete"] as const;

/** Formats the spec names beyond the standard ones (DESIGN.md §3). */
function registerCustomFormats(ajv: Ajv2020): void {
  ajv.addFormat("iana-timezone", {
    type: "string",
    validate: (value: string) => {
      try {
        new Intl.DateTimeFormat("en", { timeZone: value });
        return value.includes("/") || value === "UTC";
      } catch {
        return false;
      }
    },
  });
  ajv.addFormat("bcp47", {
    type: "string",
    validate: (value: string) => {
      try {
        return Intl.getCanonicalLocales(value).length === 1;
      } catch {
        return false;
      }
    },
  });
}

function createAjv(options: { coerce: boolean }): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: false,
    strict: false, // the spec carries OpenAPI keywords (example, discriminator…) Ajv does not know
    coerceTypes: options.coerce ? "array" : false,
    useDefaults: false,
    validateFormats: true,
  });
  addFormats(ajv);
  registerCustomFormats(ajv);
  return ajv;
}

function readSpec(file: string): SpecDocument {
  const text = readFileSync(resolve(SPEC_DIR, file), "utf8");
  return { text, json: parse(text) as Json };
}

/** Follows `$ref`s, local (`#/…`) or into the other spec file (`./openapi.yaml#/…`). */
function resolveRef(docs: Map<string, Json>, docId: string, node: unknown): { node: Json; docId: string } {
  const ref = (node as Json | undefined)?.$ref;
  if (typeof ref !== "string") return { node: node as Json, docId };
  const target = new URL(ref, docId);
  const pointer = target.hash.slice(1);
  target.hash = "";
  const doc = docs.get(target.href);
  if (!doc) throw new Error(`spec $ref to an unknown document: ${ref}`);
  let cursor: unknown = doc;
  for (const part of pointer.split("/").slice(1)) cursor = (cursor as Json)[decodeURIComponent(part)];
  return resolveRef(docs, target.href, cursor);
}

/** Makes every `$ref` absolute, so a schema taken out of its document still resolves. */
function anchored(schema: unknown, docId: string): unknown {
  if (Array.isArray(schema)) return schema.map((item) => anchored(item, docId));
  if (schema === null || typeof schema !== "object") return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    out[key] =
      key === "$ref" && typeof value === "string" ? new URL(value, docId).href : anchored(value, docId);
  }
  return out;
}

export function loadOpenApi(): OpenApi {
  const documents = { public: readSpec("openapi.yaml"), admin: readSpec("admin.yaml") };
  const bodyAjv = createAjv({ coerce: false });
  const queryAjv = createAjv({ coerce: true });
  for (const ajv of [bodyAjv, queryAjv]) {
    ajv.addSchema({ ...documents.public.json, $id: PUBLIC_ID });
    ajv.addSchema({ ...documents.admin.json, $id: ADMIN_ID });
  }

  const docs = new Map<string, Json>([
    [PUBLIC_ID, documents.public.json],
    [ADMIN_ID, documents.admin.json],
  ]);
  const operations = new Map<string, Operation>();
  const operationDocs = new Map<string, { docId: string; op: Json }>();
  for (const [doc, docId] of [
    [documents.public.json, PUBLIC_ID],
    [documents.admin.json, ADMIN_ID],
  ] as const) {
    for (const [path, pathItem] of Object.entries((doc.paths ?? {}) as Record<string, Json>)) {
      for (const method of METHODS) {
        const op = pathItem[method] as Json | undefined;
        if (!op) continue;
        const operationId = op.operationId as string;
        const security = (op.security ?? doc.security ?? []) as Record<string, string[]>[];
        const params = [...((pathItem.parameters ?? []) as Json[]), ...((op.parameters ?? []) as Json[])].map(
          (param) => resolveRef(docs, docId, param),
        );
        const query = params.filter(({ node }) => node.in === "query");
        const querySchema = {
          type: "object",
          properties: Object.fromEntries(
            query.map(({ node, docId: from }) => [node.name, anchored(node.schema, from)]),
          ),
          required: query.filter(({ node }) => node.required).map(({ node }) => node.name),
          additionalProperties: false,
        };
        const body = resolveRef(docs, docId, op.requestBody);
        const bodySchema = (body.node?.content as Json | undefined)?.["application/json"] as Json | undefined;
        operations.set(operationId, {
          operationId,
          method: method.toUpperCase(),
          path,
          scope: security.flatMap((requirement) => Object.values(requirement).flat())[0],
          authenticated: security.length > 0,
          validateQuery: queryAjv.compile(querySchema),
          validateBody: bodySchema
            ? bodyAjv.compile(anchored(bodySchema.schema, body.docId) as Json)
            : undefined,
        });
        operationDocs.set(operationId, { docId, op });
      }
    }
  }

  const responseValidators = new Map<string, ValidateFunction | undefined>();
  return {
    operations,
    documents,
    responseValidator(operationId, status) {
      const cacheKey = `${operationId} ${status}`;
      if (!responseValidators.has(cacheKey)) {
        const entry = operationDocs.get(operationId);
        if (!entry) throw new Error(`unknown operation ${operationId}`);
        const responses = entry.op.responses as Json;
        const declared = responses[String(status)] ?? responses.default;
        if (!declared) throw new Error(`${operationId} does not document status ${status}`);
        const response = resolveRef(docs, entry.docId, declared);
        const content = response.node?.content as Record<string, Json> | undefined;
        const schema = content?.["application/json"]?.schema;
        responseValidators.set(
          cacheKey,
          schema ? bodyAjv.compile(anchored(schema, response.docId) as Json) : undefined,
        );
      }
      return responseValidators.get(cacheKey);
    },
  };
}

export type { ErrorObject };
