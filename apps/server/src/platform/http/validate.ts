import type { ErrorObject, ValidateFunction } from "ajv";
import { AppError } from "../errors.js";

/** `address.city`, `tags[2]` — the field a client has to fix. */
function paramOf(error: ErrorObject): string | undefined {
  const segments = error.instancePath
    .split("/")
    .slice(1)
    .map((segment) => segment.replace(/~1/g, "/").replace(/~0/g, "~"));
  if (error.keyword === "required") segments.push(String(error.params.missingProperty));
  if (error.keyword === "additionalProperties") segments.push(String(error.params.additionalProperty));
  // A key that breaks a `propertyNames` rule: name the key itself.
  if (error.propertyName !== undefined) segments.push(error.propertyName);
  let out = "";
  for (const segment of segments)
    out += /^\d+$/.test(segment) ? `[${segment}]` : out ? `.${segment}` : segment;
  return out || undefined;
}

type Where = "body" | "query" | "header";

const NOUN: Record<Where, string> = { body: "field", query: "query parameter", header: "header" };

/** The spec's own words for a schema (validators are compiled `verbose`), on one line. */
function descriptionOf(error: ErrorObject): string | undefined {
  const description = (error.parentSchema as { description?: unknown } | undefined)?.description;
  return typeof description === "string" ? description.trim().replace(/\s+/g, " ") : undefined;
}

function describe(error: ErrorObject, param: string | undefined, where: Where): string {
  const subject = param ? `\`${param}\`` : `The ${where}`;
  // Required text carries a "not only whitespace" pattern: say so rather than quote the pattern.
  if (
    (error.keyword === "pattern" || error.keyword === "minLength") &&
    typeof error.data === "string" &&
    error.data.trim() === ""
  ) {
    return `${subject} must not be empty or only whitespace.`;
  }
  // A long pattern or list (a timestamp, a time zone) reads better as the spec describes it.
  const description = descriptionOf(error);
  const long =
    (error.keyword === "pattern" && String(error.params.pattern).length > 40) ||
    (error.keyword === "enum" && (error.params.allowedValues as unknown[]).length > 20);
  if (long && description) return `${subject} is invalid. ${description}`;
  if (error.propertyName !== undefined) {
    return `${subject} is not an allowed key: use 1 to 64 letters, digits, \`_\` or \`-\`.`;
  }
  switch (error.keyword) {
    case "required":
      return `${subject} is required.`;
    case "additionalProperties":
      return `${subject} is not a known ${NOUN[where]}; check the spelling against the API reference.`;
    case "enum":
      return `${subject} must be one of: ${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}.`;
    case "const":
      return `${subject} must be ${JSON.stringify(error.params.allowedValue)}.`;
    case "type": {
      const types = String(error.params.type).split(",");
      const listed = types.length > 1 ? `${types.slice(0, -1).join(", ")} or ${types.at(-1)}` : types[0];
      return `${subject} must be of type ${listed}.`;
    }
    case "format":
      return `${subject} must be a valid ${error.params.format}.`;
    default:
      return `${subject} ${error.message ?? "is invalid"}.`;
  }
}

/**
 * Runs a validator compiled from the spec and turns its first error into a 400 with a stable
 * code: `parameter_missing`, `parameter_unknown` or `parameter_invalid`, naming the `param`.
 */
export function assertValid(validate: ValidateFunction, data: unknown, where: Where): void {
  if (validate(data)) return;
  const errors = validate.errors ?? [];
  // Prefer the error a person can act on: a missing or unknown name before a type mismatch, and
  // in a union (`anyOf` per type, as a custom field's value) the bound the value's own type broke
  // before the other branches' type mismatches.
  const first =
    errors.find((e) => e.keyword === "required" || e.keyword === "additionalProperties") ??
    errors.find((e) => !["type", "anyOf", "oneOf"].includes(e.keyword)) ??
    errors[0];
  if (!first) throw new AppError(400, "parameter_invalid", `The ${where} is invalid.`);
  let error = first;
  // A value no branch of a union takes by type: name every type the branches allow.
  const types = errors.filter((e) => e.keyword === "type" && e.instancePath === first.instancePath);
  if (error.keyword === "type" && types.length > 1) {
    const allowed = [...new Set(types.flatMap((e) => String(e.params.type).split(",")))];
    error = { ...error, params: { type: allowed.join(",") } };
  }
  const param = paramOf(error);
  const code =
    error.keyword === "required"
      ? "parameter_missing"
      : error.keyword === "additionalProperties"
        ? "parameter_unknown"
        : "parameter_invalid";
  throw new AppError(400, code, describe(error, param, where), { param });
}
