import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { bundle, createConfig } from "@redocly/openapi-core";
import { parse } from "yaml";

/**
 * Reading the two spec files: as served (their text, and that text parsed) and dereferenced, with
 * every `$ref` (local or into the other file) replaced by its target by Redocly's bundler, so the
 * rest of the server reads plain objects.
 */

export const SPEC_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "../../../../spec");

export type Json = Record<string, unknown>;

export interface SpecDocument {
  text: string;
  json: Json;
}

/** A spec file exactly as it is published at /open/v1/openapi.yaml and .json. */
export function readSpecDocument(file: string): SpecDocument {
  const text = readFileSync(resolve(SPEC_DIR, file), "utf8");
  return { text, json: parse(text) as Json };
}

/** A spec file with every `$ref` resolved; refuses a spec Redocly cannot resolve. */
export function dereferenceSpec(file: string): Promise<Json> {
  return bundleSpec(file, { dereference: true });
}

/**
 * A spec file as one self-contained document: `$ref`s into the other file become local ones
 * (what a browser renderer needs), or with `dereference`, every `$ref` is replaced by its target.
 */
export async function bundleSpec(file: string, { dereference = false } = {}): Promise<Json> {
  const { bundle: document, problems } = await bundle({
    ref: resolve(SPEC_DIR, file),
    config: await createConfig({}),
    dereference,
  });
  const errors = problems.filter((problem) => problem.severity === "error");
  if (errors.length > 0) {
    throw new Error(`${file}: ${errors.map((problem) => problem.message).join("; ")}`);
  }
  return document.parsed as Json;
}
