import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, inject, it } from "vitest";
import { parse } from "yaml";
import { request } from "./helpers/api.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

/**
 * The reference pages in a real browser: Debian's `chromium` (.ci/run installs it), driven by
 * playwright-core, which downloads no browser of its own. The page must render every operation's
 * summary, log no console error, and fetch nothing but this server (offline use).
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const SCREENSHOT = process.env.DOCS_SCREENSHOT ?? join(tmpdir(), "deskline-docs.png");

type PathItems = Record<string, Record<string, { summary?: string }>>;

/** The summary of every operation of a spec file, webhooks included. */
async function summariesOf(file: string): Promise<string[]> {
  const text = await readFile(new URL(`../../../spec/${file}`, import.meta.url), "utf8");
  const spec = parse(text) as { paths: PathItems; webhooks?: PathItems };
  return [...Object.values(spec.paths), ...Object.values(spec.webhooks ?? {})].flatMap((item) =>
    ["get", "post", "put", "patch", "delete"].flatMap((method) => item[method]?.summary ?? []),
  );
}

// Every test here only reads: the run's server's pages and specs, or a server of its own.
describe.concurrent("the reference pages over HTTP", () => {
  it("GET /open/v1/docs is an HTML page that loads the renderer from this server", async ({ expect }) => {
    const page = await request("GET", "/open/v1/docs");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("cache-control")).toBe("no-cache");
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    const script = /<script src="([^"]+)"/.exec(page.body as string)?.[1];
    expect(script).toMatch(/^\/open\/v1\/docs\/assets\/redoc-\d+\.\d+\.\d+\.standalone\.js$/);
    expect(page.body).toContain('spec-url="/open/v1/openapi.json"');

    const asset = await fetch(new URL(script as string, inject("baseUrl")));
    expect(asset.status).toBe(200);
    expect(asset.headers.get("content-type")).toBe("application/javascript; charset=utf-8");
    expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(asset.headers.get("content-encoding")).toBe("gzip"); // fetch asks for gzip, and unpacks it
    expect((await asset.text()).length).toBeGreaterThan(500_000);

    const etag = asset.headers.get("etag") as string;
    const revalidated = await fetch(new URL(script as string, inject("baseUrl")), {
      // fetch() would add `Cache-Control: no-cache` (refusing a 304) unless one is given.
      headers: { "If-None-Match": etag, "Cache-Control": "max-age=0" },
    });
    expect(revalidated.status).toBe(304);
    const plain = await fetch(new URL(script as string, inject("baseUrl")), {
      headers: { "Accept-Encoding": "identity" },
    });
    expect(plain.headers.get("content-encoding")).toBeNull();
  });

  it("GET /admin/v1/docs needs no token, and serves the admin spec as one document", async ({ expect }) => {
    const page = await request("GET", "/admin/v1/docs");
    expect(page.status).toBe(200);
    const specUrl = /spec-url="([^"]+)"/.exec(page.body as string)?.[1] as string;
    const spec = (await (await fetch(new URL(specUrl, inject("baseUrl")))).json()) as any;
    expect(spec.info.title).toBe("Deskline Admin API");
    // Every `$ref` points inside the document: the browser cannot follow one into openapi.yaml.
    const refs = JSON.stringify(spec).match(/"\$ref":"[^"]*"/g) ?? [];
    expect(refs.length).toBeGreaterThan(0);
    expect(refs.filter((ref) => !ref.startsWith('"$ref":"#'))).toEqual([]);
  });

  describe("with the admin API off", () => {
    let server: TestServer;
    beforeAll(async () => {
      server = await startTestServer({ mongodbUri: inject("mongodbUri"), config: { adminToken: undefined } });
    });
    afterAll(() => server.stop());

    it("GET /admin/v1/docs is 404 route_not_found, the public page still 200", async ({ expect }) => {
      const admin = await request("GET", "/admin/v1/docs", { baseUrl: server.baseUrl });
      expect(admin.status).toBe(404);
      expect(admin.body.error.code).toBe("route_not_found");
      expect((await request("GET", "/open/v1/docs", { baseUrl: server.baseUrl })).status).toBe(200);
    });
  });
});

// Each test loads its page in a page (and a context) of its own, and only reads.
describe.concurrent("the reference pages in Chromium", () => {
  let browser: Browser;
  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `no browser at ${CHROMIUM}: apt-get install chromium (.ci/run does), or set CHROMIUM_PATH`,
      );
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  });
  afterAll(() => browser?.close());

  /** Loads a page and answers what it rendered and what went wrong along the way. */
  async function load(path: string, screenshot?: string) {
    const baseUrl = inject("baseUrl");
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const problems: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(`console: ${message.text()}`);
    });
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    page.on("requestfailed", (req) => problems.push(`failed: ${req.url()} ${req.failure()?.errorText}`));
    page.on("request", (req) => {
      const url = new URL(req.url());
      if (!["data:", "blob:"].includes(url.protocol) && url.origin !== new URL(baseUrl).origin) {
        problems.push(`left the server: ${req.url()}`);
      }
    });
    try {
      await page.goto(new URL(path, baseUrl).href, { waitUntil: "load" });
      // Redoc renders the operations after it has fetched and parsed the spec.
      await page.locator(".api-content h2").first().waitFor({ timeout: 60_000 });
      await page.waitForLoadState("networkidle");
      const headings = await page.locator("h2").allTextContents();
      if (screenshot) await page.screenshot({ path: screenshot });
      // A webhook's heading ends in a "Webhook" badge, set off by two spaces.
      return { headings: headings.map((text) => text.trim().split(/\s{2,}/)[0]), problems };
    } finally {
      await page.close();
    }
  }

  it("renders every operation of the public spec, offline, without a console error", async ({ expect }) => {
    const { headings, problems } = await load("/open/v1/docs", SCREENSHOT);
    const summaries = await summariesOf("openapi.yaml");
    expect(summaries.length).toBeGreaterThan(20);
    expect(summaries.filter((summary) => !headings.includes(summary))).toEqual([]);
    expect(problems).toEqual([]);
  }, 120_000);

  it("renders every operation of the admin spec", async ({ expect }) => {
    const { headings, problems } = await load("/admin/v1/docs");
    const summaries = await summariesOf("admin.yaml");
    expect(summaries.filter((summary) => !headings.includes(summary))).toEqual([]);
    expect(problems).toEqual([]);
  }, 120_000);
});
