import type { Router } from "@koa/router";
import type { Context } from "koa";
import type { RouteKit } from "../platform/http/route-kit.js";
import { createAsset, once, sendAsset } from "../platform/http/static-asset.js";
import { REFERENCE_PAGE_CSP, referencePageHtml } from "./page.js";
import { REDOC_ASSET, readRedocBundle } from "./redoc.js";

/**
 * The reference pages: GET /open/v1/docs renders the public spec, GET /admin/v1/docs
 * the admin spec while the admin API is on. The renderer's bundle is served from here too, under
 * /open/v1/docs/assets/, with a versioned name cached for a year. Files are read on first
 * request, so building the app stays free of I/O.
 */

const ASSET_PATH = `/open/v1/docs/assets/${REDOC_ASSET}`;
const ADMIN_SPEC_PATH = "/admin/v1/docs/admin.json";

export function docsRoutes(router: Router, { op, config, openapi }: RouteKit): void {
  const renderer = once(async () => createAsset("application/javascript", await readRedocBundle()));
  router.get(ASSET_PATH, async (ctx) =>
    sendAsset(ctx, await renderer(), "public, max-age=31536000, immutable"),
  );

  const publicPage = referencePageHtml({
    title: `${titleOf(openapi.documents.public.json)} reference`,
    specUrl: "/open/v1/openapi.json",
    scriptUrl: ASSET_PATH,
  });
  op("getApiReference", async ({ ctx }) => ({ status: 200, body: page(ctx, publicPage) }));

  // Off with the admin API: its paths answer 404 route_not_found then, these included.
  if (!config.adminToken) return;
  // The admin file refers into openapi.yaml; the browser gets one self-contained document.
  const adminSpec = once(async () =>
    createAsset("application/json", JSON.stringify(openapi.documents.admin.bundled)),
  );
  router.get(ADMIN_SPEC_PATH, async (ctx) => sendAsset(ctx, await adminSpec(), "no-cache"));
  const adminPage = referencePageHtml({
    title: `${titleOf(openapi.documents.admin.json)} reference`,
    specUrl: ADMIN_SPEC_PATH,
    scriptUrl: ASSET_PATH,
  });
  op("getAdminApiReference", async ({ ctx }) => ({ status: 200, body: page(ctx, adminPage) }));
}

/** A page is a few hundred bytes naming versioned assets: always fresh, never stored stale. */
function page(ctx: Context, html: string): string {
  ctx.type = "text/html";
  ctx.set({ "Cache-Control": "no-cache", "Content-Security-Policy": REFERENCE_PAGE_CSP });
  return html;
}

function titleOf(document: Record<string, unknown>): string {
  return ((document.info as { title?: string } | undefined)?.title ?? "API").trim();
}
