import { createHash } from "node:crypto";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import type { Context } from "koa";

/**
 * Fixed bytes served the way browsers and proxies cache best: a strong ETag (so a revalidation
 * costs a 304), gzip when the client takes it (the reference renderer is ~1 MB, ~300 kB
 * gzipped), and the caller's Cache-Control. Compressed once, on first use.
 */
export interface StaticAsset {
  type: string;
  body: Buffer;
  gzipped: Buffer;
  etag: string;
}

export async function createAsset(type: string, body: Buffer | string): Promise<StaticAsset> {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body);
  const etag = `"${createHash("sha256").update(bytes).digest("base64url").slice(0, 27)}"`;
  return { type, body: bytes, gzipped: await promisify(gzip)(bytes), etag };
}

/** Answers with `asset`, or 304 when the client's copy is current. */
export function sendAsset(ctx: Context, asset: StaticAsset, cacheControl: string): void {
  ctx.set({ ETag: asset.etag, "Cache-Control": cacheControl, Vary: "Accept-Encoding" });
  ctx.type = asset.type;
  ctx.status = 200;
  if (ctx.fresh) {
    ctx.status = 304;
    return;
  }
  if (ctx.acceptsEncodings("gzip", "identity") === "gzip") {
    ctx.set("Content-Encoding", "gzip");
    ctx.body = asset.gzipped;
  } else {
    ctx.body = asset.body;
  }
}

/** A value computed on first use and shared after (a failed computation is retried). */
export function once<T>(make: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    pending ??= make().catch((error: unknown) => {
      pending = undefined;
      throw error;
    });
    return pending;
  };
}
