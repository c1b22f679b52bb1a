import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import {
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  chromium,
  type Page,
} from "playwright-core";

/**
 * Chromium for the browser tests and benches: Debian's `chromium` (.ci/run installs it), driven
 * by playwright-core, which downloads no browser of its own; and axe-core, run inside a page.
 */

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `no browser at ${CHROMIUM}: apt-get install chromium (.ci/run does), or set CHROMIUM_PATH`,
    );
  }
  return chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
}

/**
 * A browser context whose pages read this process's time: a test process may run on a moved clock
 * (helpers/shifted-date.mjs: the suite on a later date), and a page's own clock, the machine's,
 * would then be that far from the server's (the console's default "since an hour ago" fell 60
 * days before every event). Moved in the page as the preload moves Node's `Date`, before any of
 * the page's scripts run; every context a test opens comes from here.
 */
export async function newContext(
  browser: Browser,
  options: BrowserContextOptions = {},
): Promise<BrowserContext> {
  const context = await browser.newContext(options);
  const offset = Math.round(Date.now() - (performance.timeOrigin + performance.now()));
  if (Math.abs(offset) > 1_000) await context.addInitScript({ content: movedDate(offset) });
  return context;
}

/** Page script: `Date` moved `offset` ms (helpers/shifted-date.mjs, in a page). */
const movedDate = (offset: number) => `{
  const RealDate = Date;
  const realNow = RealDate.now;
  class MovedDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(realNow() + ${offset});
      else super(...args);
    }
    static now() {
      return realNow() + ${offset};
    }
  }
  globalThis.Date = new Proxy(MovedDate, { apply: () => new MovedDate().toString() });
}`;

/**
 * What went wrong on a page while a test used it: console errors, page errors, failed requests,
 * and any request that left `origin` (the page must work offline).
 */
export function watchProblems(page: Page, origin: string): string[] {
  const problems: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (!["data:", "blob:"].includes(url.protocol) && url.origin !== origin) {
      problems.push(`left the server: ${request.url()}`);
    }
  });
  return problems;
}

const axeSource = readFile(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

/**
 * Runs axe-core (WCAG 2.x A and AA rules) on the page as it is now and answers its serious and
 * critical violations. The source is evaluated through the browser's debugging protocol, which
 * the page's Content-Security-Policy does not govern (a <script> tag of it would be refused).
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(await axeSource);
  const violations = await page.evaluate(async () => {
    // In the page: `axe` is the global the source just defined; no context runs the whole document.
    const axe = (
      globalThis as unknown as { axe: { run(options: unknown): Promise<{ violations: AxeViolation[] }> } }
    ).axe;
    const result = await axe.run({
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] },
    });
    return result.violations;
  });
  return violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map(({ id, impact, help, nodes }) => ({
      id,
      impact,
      help,
      nodes: nodes.map(({ target }) => ({ target })),
    }));
}
