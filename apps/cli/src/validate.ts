// Rows are checked against the spec's own request schema before anything is sent, so a bad row
// costs no request and its reason names the field, as the server's 400 would.
import { Ajv2020, type ErrorObject } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

export type Validator = (body: unknown) => string | undefined;

/** A validator for one request schema; returns the reason a body is refused, or undefined. */
export function compileValidator(schema: object): Validator {
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  addFormats(ajv);
  const validate = ajv.compile(schema);
  return (body) => (validate(body) ? undefined : describe(chosen(validate.errors ?? [])));
}

/**
 * The first error, except in a union (`anyOf` per type, as a custom field's value): there the bound
 * the value's own type broke, before the other branches' type mismatches (as the server chooses).
 */
function chosen(errors: ErrorObject[]): ErrorObject | undefined {
  return errors.find((e) => !["type", "anyOf", "oneOf"].includes(e.keyword)) ?? errors[0];
}

/** `email: must match format "email"` — the field as a dotted path, then Ajv's words. */
function describe(error: ErrorObject | null | undefined): string {
  if (!error) return "invalid";
  const path = error.instancePath.slice(1).replace(/\//g, ".");
  if (error.keyword === "additionalProperties") {
    const extra = (error.params as { additionalProperty: string }).additionalProperty;
    return `${path ? `${path}.` : ""}${extra}: unknown field`;
  }
  if (error.keyword === "required") {
    return `${(error.params as { missingProperty: string }).missingProperty}: required`;
  }
  if (error.keyword === "type") {
    // `["boolean", "null"]` reads "must be boolean": null is "leave the cell empty", not advice.
    const types = [(error.params as { type: string | string[] }).type]
      .flat()
      .filter((type) => type !== "null");
    return `${path || "row"}: must be ${types.join(" or ")}`;
  }
  return `${path || "row"}: ${error.message ?? "invalid"}`;
}
