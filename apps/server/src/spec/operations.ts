import type { Json } from "./documents.js";

/** One operation of a dereferenced spec, as the server mounts and validates it. */
export interface OperationSpec {
  operationId: string;
  method: string;
  /** The spec's path template, e.g. `/open/v1/contacts/{id}`. */
  path: string;
  /** The one scope the operation needs; undefined for public ones (the spec documents). */
  scope: string | undefined;
  /** Needs a bearer token at all (false for the spec documents and probes). */
  authenticated: boolean;
  /** Its query and header parameters (path parameters are the router's). */
  parameters: { query: ParameterSpec[]; header: ParameterSpec[] };
  /**
   * Query parameters named by a pattern (`custom_fields.<key>`), which OpenAPI's `parameters`
   * cannot declare: the operation's `x-query-pattern-parameters`.
   */
  queryPatterns: PatternParameterSpec[];
  /** The JSON Schema of its `application/json` request body, if it takes one. */
  bodySchema: Json | undefined;
  /** `requestBody.required`: a request without a body is `400 parameter_missing`, not `{}`. */
  bodyRequired: boolean;
}

export interface ParameterSpec {
  name: string;
  required: boolean;
  schema: Json;
}

export interface PatternParameterSpec {
  /** A regular expression every such name matches. */
  pattern: string;
  schema: Json;
}

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

/** A parameter list of a path item or operation, by location (`query`, `header`…). */
function parametersIn(list: unknown, location: string): ParameterSpec[] {
  return ((list ?? []) as Json[])
    .filter((parameter) => parameter.in === location)
    .map((parameter) => ({
      name: parameter.name as string,
      required: parameter.required === true,
      schema: (parameter.schema ?? {}) as Json,
    }));
}

/** The scope named by the operation's security requirement (the spec gives one per operation). */
function scopeOf(security: Record<string, string[]>[]): string | undefined {
  return security.flatMap((requirement) => Object.values(requirement).flat())[0];
}

function bodySchemaOf(operation: Json): Json | undefined {
  const content = (operation.requestBody as Json | undefined)?.content as Json | undefined;
  return (content?.["application/json"] as Json | undefined)?.schema as Json | undefined;
}

/** Every operation of a dereferenced spec document. */
export function listOperations(document: Json): OperationSpec[] {
  const out: OperationSpec[] = [];
  for (const [path, pathItem] of Object.entries((document.paths ?? {}) as Record<string, Json>)) {
    for (const method of METHODS) {
      const operation = pathItem[method] as Json | undefined;
      if (!operation) continue;
      const security = (operation.security ?? document.security ?? []) as Record<string, string[]>[];
      const parameters = [
        ...((pathItem.parameters ?? []) as Json[]),
        ...((operation.parameters ?? []) as Json[]),
      ];
      out.push({
        operationId: operation.operationId as string,
        method: method.toUpperCase(),
        path,
        scope: scopeOf(security),
        authenticated: security.length > 0,
        parameters: { query: parametersIn(parameters, "query"), header: parametersIn(parameters, "header") },
        queryPatterns: ((operation["x-query-pattern-parameters"] ?? []) as Json[]).map((parameter) => ({
          pattern: parameter.pattern as string,
          schema: (parameter.schema ?? {}) as Json,
        })),
        bodySchema: bodySchemaOf(operation),
        bodyRequired: (operation.requestBody as Json | undefined)?.required === true,
      });
    }
  }
  return out;
}
