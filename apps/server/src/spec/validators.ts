import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import type { Json } from "./documents.js";
import type { OperationSpec, ParameterSpec, PatternParameterSpec } from "./operations.js";

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/** The validators of one operation, compiled from its schemas in the spec. */
export interface RequestValidators {
  validateQuery: ValidateFunction;
  validateHeaders: ValidateFunction;
  validateBody: ValidateFunction | undefined;
}

function createAjv(options: { coerce: boolean }): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: false,
    strict: false, // the spec carries OpenAPI keywords (example, discriminator…) Ajv does not know
    coerceTypes: options.coerce ? "array" : false,
    useDefaults: false,
    validateFormats: true,
    // Errors carry the value and the schema, so a message can quote the spec (platform/http/validate.ts).
    verbose: true,
  });
  addFormats(ajv);
  return ajv;
}

/**
 * Parameters as one object schema; `closed` refuses names the spec does not list (queries), but
 * for those a pattern names (`custom_fields.<key>`).
 */
function parametersSchema(
  parameters: ParameterSpec[],
  closed: boolean,
  patterns: PatternParameterSpec[] = [],
): Json {
  return {
    type: "object",
    properties: Object.fromEntries(parameters.map(({ name, schema }) => [name, schema])),
    patternProperties: Object.fromEntries(patterns.map(({ pattern, schema }) => [pattern, schema])),
    required: parameters.filter(({ required }) => required).map(({ name }) => name),
    additionalProperties: !closed,
  };
}

/**
 * The operation with its request validators. Query strings and headers are text, so their
 * validator coerces ("10" → 10, one `tag` → ["tag"]); JSON bodies are typed already and are not
 * coerced. Each validator is compiled when first asked for: compiling all of them cost a server
 * process about 0.4 s of CPU at every start, for operations a worker or a short-lived process
 * never serves; a request pays it once, a few milliseconds.
 */
export function createRequestValidators(): (operation: OperationSpec) => OperationSpec & RequestValidators {
  const textAjv = createAjv({ coerce: true });
  const bodyAjv = createAjv({ coerce: false });
  return (operation) => {
    const { bodySchema } = operation;
    const query = once(() =>
      textAjv.compile(parametersSchema(operation.parameters.query, true, operation.queryPatterns)),
    );
    const header = once(() => textAjv.compile(parametersSchema(operation.parameters.header, false)));
    const body = bodySchema ? once(() => bodyAjv.compile(bodySchema)) : () => undefined;
    return Object.defineProperties(
      { ...operation },
      {
        validateQuery: { get: query, enumerable: true },
        validateHeaders: { get: header, enumerable: true },
        validateBody: { get: body, enumerable: true },
      },
    ) as OperationSpec & RequestValidators;
  };
}

/** `make`'s value, made at the first call and kept. */
function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => {
    made ??= { value: make() };
    return made.value;
  };
}
