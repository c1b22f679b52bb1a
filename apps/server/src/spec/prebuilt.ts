import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { deserialize, serialize } from "node:v8";
import type { Json, SpecFile } from "./documents.js";

/**
 * The spec as the build leaves it beside the server's code (docs/decisions.md, "The build keeps
 * the spec loaded"): each file parsed, bundled and dereferenced once by `pnpm build`, so a server
 * process starts without Redocly's bundler and without parsing YAML. Kept with the digest of the
 * text it came from: a spec edited after the build no longer matches, and the server reads the
 * YAML as it does from source. Written with node:v8's serializer, which keeps what JSON would not:
 * the parts a dereferenced document shares stay shared (a JSON copy of the public spec took 7.7 MB
 * more heap).
 */
export interface PrebuiltSpec {
  /** SHA-256 of the file's text, hex. */
  digest: string;
  /** The file parsed, as served at /open/v1/openapi.json. */
  json: Json;
  /** Every `$ref` replaced by its target. */
  dereferenced: Json;
  /** One self-contained document: `$ref`s into the other file made local. */
  bundled: Json;
}

/** Beside the built code: `dist/spec/prebuilt/` (from source, `src/spec/prebuilt/`, never written). */
const DIR = join(import.meta.dirname, "prebuilt");
const pathOf = (file: SpecFile, dir: string) => join(dir, `${file}.v8`);

export function digestOf(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** What the build kept for `file`, if it was built from this `text`; undefined otherwise (or from source). */
export function readPrebuilt(file: SpecFile, text: string, dir = DIR): PrebuiltSpec | undefined {
  let prebuilt: PrebuiltSpec;
  try {
    prebuilt = deserialize(readFileSync(pathOf(file, dir))) as PrebuiltSpec;
  } catch {
    return undefined; // none (running from source), or written by a Node whose format this one cannot read
  }
  return prebuilt.digest === digestOf(text) ? prebuilt : undefined;
}

export function writePrebuilt(file: SpecFile, prebuilt: PrebuiltSpec, dir = DIR): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(pathOf(file, dir), serialize(prebuilt));
}
