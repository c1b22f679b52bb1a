import { readdir, readFile } from "node:fs/promises";
import { extname } from "node:path";
import { createAsset, type StaticAsset } from "../platform/http/static-asset.js";

/**
 * The console's browser files: plain ES modules and one stylesheet under apps/server/console/,
 * served as written (no build step, no framework; docs/decisions.md "Webhook console"). The
 * folder sits beside src/ and dist/ alike, so the same path works from either, and the package's
 * `files` ships it. Read and gzipped once, on first request.
 */

export const ASSETS_DIR = new URL("../../console/", import.meta.url);

const TYPES: Record<string, string> = {
  ".js": "text/javascript",
  ".css": "text/css",
  ".svg": "image/svg+xml",
};

export async function loadConsoleAssets(dir: URL = ASSETS_DIR): Promise<Map<string, StaticAsset>> {
  const assets = new Map<string, StaticAsset>();
  for (const name of await readdir(dir)) {
    const type = TYPES[extname(name)];
    if (type) assets.set(name, await createAsset(type, await readFile(new URL(name, dir))));
  }
  return assets;
}
