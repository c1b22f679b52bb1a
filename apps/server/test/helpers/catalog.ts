import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { expect } from "vitest";
import { api } from "./api.js";

// The event-type catalog as a receiver uses it: each schema compiled by a stock Ajv for 2020-12.

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

export function compileCatalogSchema(schema: Record<string, unknown>) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  return ajv.compile(schema);
}

/** The catalog's validators by event type, read from the server at `baseUrl` (default: the run's). */
export async function catalogValidators(key: string, baseUrl?: string) {
  const response = await api.get("/open/v1/event-types", { key, baseUrl });
  expect(response.status).toBe(200);
  const entries = response.body.data as { type: string; schema: Record<string, unknown> }[];
  return new Map(entries.map((entry) => [entry.type, compileCatalogSchema(entry.schema)]));
}
