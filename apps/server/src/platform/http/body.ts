import type { Context } from "koa";
import getRawBody from "raw-body";
import { AppError } from "../errors.js";
import { findDuplicateName, findUnsafeValue } from "./i-json.js";
import { nestsDeeperThan } from "./json-depth.js";

/**
 * How deep a body of the API may nest (docs/decisions.md "Bounded JSON bodies"): the deepest
 * body of the spec nests four levels (a batch of contacts with their address); eight times that
 * leaves room for any body a client means to send.
 */
export const MAX_BODY_DEPTH = 32;

/** What a JSON body may be: at most `bytes` long, nesting at most `depth` arrays or objects. */
export interface BodyBounds {
  bytes: number;
  depth: number;
}

/**
 * Reads a JSON request body: JSON only (415), at most `bounds.bytes` long (413), nested at most
 * `bounds.depth` deep (400, checked before anything parses it), well-formed (400). No body at all
 * (or only whitespace) is `undefined`: the operation decides whether it needs one.
 */
export async function readJsonBody(ctx: Context, bounds: BodyBounds): Promise<unknown> {
  const limit = bounds.bytes;
  const length = ctx.request.length;
  const hasBody = (length !== undefined && length > 0) || ctx.get("Transfer-Encoding") !== "";
  if (!hasBody) return undefined;
  if (!ctx.is("application/json")) {
    throw new AppError(
      415,
      "unsupported_media_type",
      "Send the request body as JSON with `Content-Type: application/json`.",
    );
  }
  const charset = ctx.request.charset;
  if (charset && charset.toLowerCase() !== "utf-8" && charset.toLowerCase() !== "utf8") {
    throw new AppError(415, "unsupported_media_type", "JSON bodies must be UTF-8.");
  }
  let raw: string;
  try {
    raw = await getRawBody(ctx.req, { limit, length, encoding: "utf8" });
  } catch (error) {
    if ((error as { type?: string }).type === "entity.too.large") {
      throw new AppError(413, "body_too_large", `The request body exceeds ${limit} bytes.`);
    }
    throw new AppError(400, "invalid_body", "The request body could not be read completely.");
  }
  if (raw.trim() === "") return undefined;
  if (nestsDeeperThan(raw, bounds.depth)) {
    throw new AppError(
      400,
      "body_too_deep",
      `The request body nests arrays and objects more than ${bounds.depth} levels deep.`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw new AppError(
      400,
      "invalid_json",
      `The request body is not valid JSON: ${(error as Error).message}`,
    );
  }
  if (parsed === null || typeof parsed !== "object") return parsed;
  // I-JSON (RFC 7493): JSON.parse would keep the last of two equal names and a stored record
  // would not hold what was sent (see i-json.ts).
  const duplicate = findDuplicateName(raw);
  if (duplicate !== undefined) {
    throw new AppError(400, "invalid_json", `\`${duplicate}\` appears more than once in the body.`, {
      param: duplicate,
    });
  }
  const unsafe = findUnsafeValue(parsed);
  if (unsafe) throw new AppError(400, "parameter_invalid", unsafe.message, { param: unsafe.param });
  return parsed;
}
