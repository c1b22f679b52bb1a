import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { load } from "js-yaml";
import { type PrebuiltSpec, readPrebuilt } from "./prebuilt.js";

/**
 * Reading the two spec files: as served (their text, and that text parsed), as one self-contained
 * document, and dereferenced, with every `$ref` (local or into the other file) replaced by its
 * target by Redocly's bundler, so the rest of the server reads plain objects. What the build kept
 * (prebuilt.ts) saves a process all of that but reading the text.
 */

/** The spec's two files, as the server reads and serves them. */
export type SpecFile = "openapi.yaml" | "admin.yaml";
export const SPEC_FILES: readonly SpecFile[] = ["openapi.yaml", "admin.yaml"];

const require = createRequire(import.meta.url);

/**
 * Where a spec file is: found through the package that holds it (`@deskline/spec` exports both),
 * so the build runs wherever it and its dependencies are put (docs/decisions.md, "The spec is a
 * package, and the server finds it by name").
 */
export function specPath(file: SpecFile): string {
  return require.resolve(`@deskline/spec/${file}`);
}

export type Json = Record<string, unknown>;

/** A spec file exactly as it is published at /open/v1/openapi.yaml and .json. */
export interface SpecDocument {
  text: string;
  json: Json;
}

/** A spec file in every form the server reads it. */
export interface LoadedSpecFile extends SpecDocument, Omit<PrebuiltSpec, "digest" | "json"> {}

/** The file from what the build kept, where that was built from this text; else from the YAML. */
export async function loadSpecFile(file: SpecFile): Promise<LoadedSpecFile> {
  const text = readFileSync(specPath(file), "utf8");
  const prebuilt = readPrebuilt(file, text);
  if (prebuilt)
    return { text, json: prebuilt.json, dereferenced: prebuilt.dereferenced, bundled: prebuilt.bundled };
  return { text, ...(await parseSpecFile(file, text)) };
}

/**
 * The slow way, from the text: parsed with js-yaml, the parser Redocly reads it with too (five
 * times faster than `yaml` on this file, the same objects), then bundled and dereferenced by
 * Redocly, which is imported only here: a process that starts from the build never loads it.
 */
export async function parseSpecFile(file: SpecFile, text: string): Promise<Omit<PrebuiltSpec, "digest">> {
  const { bundle, createConfig } = await import("@redocly/openapi-core");
  const config = await createConfig({});
  const bundleOf = async (dereference: boolean) => {
    const { bundle: document, problems } = await bundle({ ref: specPath(file), config, dereference });
    const errors = problems.filter((problem) => problem.severity === "error");
    if (errors.length > 0) {
      throw new Error(`${file}: ${errors.map((problem) => problem.message).join("; ")}`);
    }
    return document.parsed as Json;
  };
  return { json: load(text) as Json, bundled: await bundleOf(false), dereferenced: await bundleOf(true) };
}
