import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/**
 * The reference renderer: Redoc's standalone browser bundle (React, styles and the search worker
 * in one file), taken from the installed npm package so the page needs no CDN and works offline.
 * Redoc 2: Redoc 3 needs Node 22 (docs/design.md, Pieces), and Scalar's current releases do too.
 */

const require = createRequire(import.meta.url);
const packageDir = dirname(require.resolve("redoc/package.json"));

export const REDOC_VERSION = (require("redoc/package.json") as { version: string }).version;

/** Versioned, so the file can be cached for a year: an upgrade changes its URL. */
export const REDOC_ASSET = `redoc-${REDOC_VERSION}.standalone.js`;

/**
 * The bundle's one request off the server: the "API docs by Redocly" footer shows a logo from
 * cdn.redoc.ly (unconditionally), which fails offline and logs a console error. It becomes an
 * empty inline SVG; the attribution text and its link stay. The browser test fails on any other
 * request that leaves the server, so a new one in a Redoc update cannot slip through.
 */
const OFFLINE_REWRITES: [string, string][] = [
  [
    "https://cdn.redoc.ly/redoc/logo-mini.svg",
    "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E",
  ],
];

export async function readRedocBundle(): Promise<string> {
  let bundle = await readFile(join(packageDir, "bundles", "redoc.standalone.js"), "utf8");
  for (const [from, to] of OFFLINE_REWRITES) bundle = bundle.replaceAll(from, to);
  return bundle;
}
