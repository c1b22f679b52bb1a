import { tmpdir } from "node:os";
import { join } from "node:path";
import { constructEvent } from "@deskline/webhook-verifier";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { api, newWorkspace } from "./helpers/api.js";
import { launchChromium, newContext, seriousViolations, watchProblems } from "./helpers/browser.js";
import { mintSession } from "./helpers/console.js";
import { type Deployment, startDeployment } from "./helpers/delivery.js";
import { type Receiver, startReceiver } from "./helpers/https-receiver.js";
import { runToEnd } from "./helpers/server-process.js";

// The webhook console in Chromium, against a real server process that delivers webhooks (50 ms
// retries) to an HTTPS receiver this file starts: a person's session from minting the link to
// fixing a failing endpoint, a recovery after a pause, the refusals, and an axe-core scan of
// every page. The controls are found as a person finds them: by role and accessible name.

vi.setConfig({ testTimeout: 120_000 });

/** The CLI's build (`pnpm test` builds it first), as a person runs `deskline`. */
const CLI = join(import.meta.dirname, "../../cli/dist/bin.js");

const SCREENSHOT = process.env.CONSOLE_SCREENSHOT ?? join(tmpdir(), "deskline-console.png");

let deployment: Deployment;
let baseUrl: string;
let browser: Browser;
let workspaceId: string;
let key: string;
let receiver: Receiver;
const contexts: BrowserContext[] = [];
/** Every page's troubles (console errors, requests leaving the server), checked at the end. */
const problems: string[] = [];

beforeAll(async () => {
  deployment = await startDeployment();
  baseUrl = await (await deployment.start("all")).baseUrl;
  ({ workspaceId, key } = await newWorkspace(undefined, baseUrl));
  receiver = await startReceiver();
  browser = await launchChromium();
}, 180_000);
afterAll(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
});

/** A fresh browser (its own cookies) that opened a new console link of `workspace`. */
async function openConsole(
  workspace = workspaceId,
  viewport = { width: 1280, height: 900 },
): Promise<{ page: Page; url: string }> {
  const { url } = await mintSession(workspace, {}, baseUrl);
  return openLink(url, viewport);
}

/** A fresh browser (its own cookies) that opened the console link `url`. */
async function openLink(url: string, viewport = { width: 1280, height: 900 }) {
  const context = await newContext(browser, { viewport });
  contexts.push(context);
  const page = await context.newPage();
  problems.push(...watchProblems(page, baseUrl));
  await page.goto(url);
  return { page, url };
}

const newContact = async (name: string) => {
  const created = await api.post("/open/v1/contacts", { key, baseUrl, body: { name } });
  expect(created.status).toBe(201);
  return created.body.id as string;
};

/** How wide the page lays out, in CSS pixels: wider than the viewport scrolls sideways. */
const pageWidth = async (page: Page) =>
  (await page.evaluate("document.documentElement.scrollWidth")) as number;

/** Waits for a control or text to be on screen. */
const shown = (locator: Locator) => locator.first().waitFor({ state: "visible", timeout: 30_000 });
/** Polls a locator's text (`textContent`, of the first match) until the assertion holds. */
const textOf = (locator: Locator, timeout = 30_000) =>
  expect.poll(async () => ((await locator.count()) ? await locator.first().textContent() : ""), { timeout });
const countOf = (locator: Locator) => expect.poll(() => locator.count(), { timeout: 30_000 });

/** Clicks "Refresh" until a delivery row shows `status` (deliveries settle in the background). */
async function refreshUntil(page: Page, status: string) {
  const row = page.locator("tr[data-delivery]").filter({ hasText: status });
  await expect
    .poll(
      async () => {
        await page.getByRole("button", { name: "Refresh" }).click();
        await page.waitForLoadState("networkidle");
        return row.count();
      },
      { timeout: 30_000, interval: 300 },
    )
    .toBeGreaterThan(0);
  return row.first();
}

// The first tests drive one page on, each from where the one before left it.
let endpointPage: Page;
/** The signing secret the console showed once when it added the receiver's endpoint. */
let secret: string;

describe("the webhook console in Chromium: a failing endpoint", () => {
  it("adds a failing endpoint, shows the failed delivery and its attempts, and resends it once fixed", async () => {
    // Markup in the answer, to see it shown as the text it is.
    const down = "<b>down for maintenance</b>";
    receiver.answer = () => ({ status: 503, headers: { "content-type": "text/html" }, body: down });
    const { page } = await openConsole();
    endpointPage = page;
    await shown(page.getByRole("heading", { level: 1, name: "Webhook endpoints" }));
    expect(page.url()).toMatch(/\/console\/#\/endpoints$/); // the token left the address bar

    await page.getByRole("button", { name: "Add endpoint" }).click();
    await page.getByLabel("URL").fill(receiver.url);
    await page.getByLabel("Events").selectOption(["contact.created"]);
    await page.getByLabel("Description").fill("CRM sync");
    await page.getByRole("button", { name: "Save" }).click();
    await textOf(page.locator(".secret")).toMatch(/^whsec_/);
    secret = (await page.locator(".secret").textContent()) as string;

    await page.getByRole("link", { name: receiver.url, exact: true }).click();
    await shown(page.getByRole("heading", { level: 1, name: receiver.url }));
    await shown(page.getByRole("heading", { name: "Deliveries", exact: true }));

    await newContact("Ada");
    const failed = await refreshUntil(page, "failed");
    await textOf(failed.getByRole("cell").nth(1)).toBe("5"); // attempts: the first and 4 retries
    await failed.getByRole("button", { name: "Details" }).click();
    const attempts = page.locator("table.attempts tbody tr");
    await countOf(attempts).toBe(5);
    await textOf(attempts.first()).toContain("503");
    await textOf(attempts.first()).toContain("HTTP 503");
    // "What did my server say?": the receiver's answer, its type and body as text, never markup.
    await textOf(attempts.first().locator(".answer-body")).toBe(down);
    await textOf(attempts.first()).toContain("text/html");
    await countOf(attempts.first().locator("b")).toBe(0);
    await textOf(page.locator("pre.payload")).toContain('"type": "contact.created"');

    receiver.answer = () => ({ status: 200 });
    await failed.getByRole("button", { name: "Resend" }).click();
    const succeeded = await refreshUntil(page, "succeeded");
    await textOf(succeeded.getByRole("cell").nth(0)).toBe("succeeded");
    // The failed one says its event went later, and how.
    const before = page.locator("tr[data-delivery]").filter({ hasText: "failed" }).first();
    await textOf(before.getByRole("cell").nth(0)).toBe("failed sent later (resent)");
    // The chart and the success rate count both deliveries of the event.
    await textOf(page.locator(".legend")).toContain("1 succeeded 1 failed");
    await textOf(page.locator("[data-rate]")).toBe("50 %");
    // "Refresh" reads the facts again with the list: the success reset the failure count (the
    // endpoint's count is written just after the delivery's status, so it may take one more).
    const failures = page.locator(".facts dt:has-text('Consecutive failures') + dd");
    await expect
      .poll(
        async () => {
          await page.getByRole("button", { name: "Refresh" }).click();
          await page.waitForLoadState("networkidle");
          return failures.textContent();
        },
        { timeout: 30_000, interval: 300 },
      )
      .toBe("0");
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
  });
});

describe("the webhook console in Chromium: recovery, and finding events", () => {
  it("recovers what the endpoint missed while paused", async () => {
    const page = endpointPage;
    await page.getByRole("button", { name: "Pause" }).click();
    await shown(page.getByRole("button", { name: "Resume" }));
    await textOf(page.locator(".facts")).toContain("paused by its owner");
    await textOf(page.locator(".facts .badge")).toBe("paused");
    // A resend to it now is refused, said in plain words beside the button.
    await page.locator("tr[data-delivery]").first().getByRole("button", { name: "Resend" }).click();
    await textOf(page.locator("tr[data-delivery] .problem")).toBe(
      "The endpoint is disabled and receives nothing: resume or enable it first.",
    );
    // Nothing to recover into while paused: the button says so by being off, with the reason.
    await shown(page.getByRole("button", { name: "Recover", disabled: true }));
    const missed = await newContact("Grace");
    await page.getByRole("button", { name: "Resume" }).click();
    await shown(page.getByRole("button", { name: "Pause" }));

    await page.getByRole("button", { name: "Recover" }).click();
    // First what it would queue (the dry run), then, asked for, the recovery itself.
    await textOf(page.locator(".progress"), 10_000).toContain(
      "Would queue 1: 0 failed, 0 dropped, 1 never sent",
    );
    await page.getByRole("button", { name: "Queue 1" }).click();
    await textOf(page.locator(".progress"), 10_000).toContain("1 queued");
    await textOf(page.locator(".progress"), 30_000).toContain("1 succeeded");
    const event = await api.get("/open/v1/events", {
      key,
      baseUrl,
      query: { type: "contact.created", limit: 1 },
    });
    expect(event.body.data[0].data.id).toBe(missed);
    expect(receiver.deliveriesOf(event.body.data[0].id)).toHaveLength(1);
  });

  it("finds events by type and id, each with where it went, and opens one", async () => {
    const page = endpointPage;
    await page.getByRole("link", { name: "Events", exact: true }).click();
    await shown(page.getByRole("heading", { level: 1, name: "Events" }));
    const rows = page.locator("tbody tr");
    await textOf(rows.first()).toContain(receiver.url);
    await textOf(rows.first()).toContain("succeeded");
    // By type: every row listed is of it.
    await page.getByLabel("Event type").selectOption("contact.created");
    await page.getByRole("button", { name: "Search" }).click();
    await expect.poll(() => new URL(page.url()).hash).toBe("#/events?type=contact.created");
    await expect
      .poll(async () => [...new Set(await rows.locator("td:nth-of-type(1)").allTextContents())])
      .toEqual(["contact.created"]);
    const eventId = (await rows.first().getByRole("link").first().textContent()) as string;
    await page.getByLabel("Event ID").fill(eventId);
    await page.getByRole("button", { name: "Search" }).click();
    await countOf(rows).toBe(1);
    // The search is in the address: a reload (or the address sent to someone) finds it again.
    expect(new URL(page.url()).hash).toBe(`#/events?type=contact.created&id=${eventId}`);
    await page.reload();
    await countOf(rows).toBe(1);
    await expect.poll(() => page.getByLabel("Event ID").inputValue()).toBe(eventId);
    await rows.first().getByRole("link", { name: eventId }).click();
    await textOf(page.getByRole("heading", { level: 1 })).toContain(eventId);
    await textOf(page.locator("pre.payload")).toContain(eventId);
    await countOf(page.getByRole("button", { name: "Resend" })).toBe(1);
  });
});

describe("the webhook console in Chromium: the event log by time", () => {
  it("filters the event log by time, reading where a page of events went in one request", async () => {
    const page = endpointPage; // on an event's page
    const listed = await api.get("/open/v1/events", { key, baseUrl, query: { limit: 100 } });
    type Listed = { id: string; created: number };
    const events = listed.body.data as Listed[];
    const [newest, oldest] = [events[0] as Listed, events.at(-1) as Listed];
    // Whole seconds apart: the earlier tests took longer than a second.
    expect(newest.created).toBeGreaterThan(oldest.created);
    // A `datetime-local` value of an event's second, in the browser's own time zone.
    const local = (seconds: number) =>
      page.evaluate((at) => {
        const date = new Date(at * 1000);
        const two = (n: number) => String(n).padStart(2, "0");
        return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())}T${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`;
      }, seconds);
    const requests: string[] = [];
    page.on("request", (request) => requests.push(new URL(request.url()).pathname));
    await page.getByRole("link", { name: "Events", exact: true }).first().click();
    await shown(page.getByRole("heading", { level: 1, name: "Events" }));
    const eventLink = (id: string) => page.getByRole("main").getByRole("link", { name: id, exact: true });
    const rowOf = (id: string) =>
      page.locator("tbody tr").filter({ has: page.getByRole("link", { name: id, exact: true }) });

    await page.getByLabel("From").fill(await local(newest.created));
    await page.getByRole("button", { name: "Search" }).click();
    await countOf(eventLink(oldest.id)).toBe(0);
    await countOf(eventLink(newest.id)).toBe(1);
    // The address keeps the instant itself (UTC), whatever the time zone of whoever opens it.
    const hash = new URL(page.url()).hash;
    expect(hash.split("?")[0]).toBe("#/events");
    expect(new URLSearchParams(hash.split("?")[1]).get("from")).toBe(
      new Date(newest.created * 1000).toISOString().replace(".000Z", "Z"),
    );

    await page.getByLabel("From").fill("");
    await page.getByLabel("To").fill(await local(oldest.created));
    await page.getByRole("button", { name: "Search" }).click();
    await countOf(eventLink(newest.id)).toBe(0);
    await countOf(eventLink(oldest.id)).toBe(1);
    // Where it went: the receiver's endpoint, by its URL.
    await textOf(rowOf(oldest.id)).toContain(receiver.url);
    // The window is in the address: a reload lists the same events.
    await page.reload();
    await countOf(eventLink(oldest.id)).toBe(1);
    await countOf(eventLink(newest.id)).toBe(0);
    await textOf(rowOf(oldest.id)).toContain(receiver.url);
    // Every list's "Delivered to" came from one request for its whole page, none per event.
    expect(requests.filter((path) => /\/events\/evt_\w+\/deliveries$/.test(path))).toEqual([]);
    expect(requests.filter((path) => path.endsWith("/webhook-deliveries"))).toHaveLength(4);
    await eventLink(oldest.id).click();
    await textOf(page.getByRole("heading", { level: 1 })).toContain(oldest.id);
  });
});

describe("the webhook console in Chromium: test events, and resending several", () => {
  it("sends a test event, signed and marked as a test; resends two failed deliveries picked at once", async () => {
    const page = endpointPage; // on an event's page: back to the receiver's endpoint
    await page.getByRole("link", { name: receiver.url }).first().click();
    await shown(page.getByRole("heading", { level: 1, name: receiver.url }));
    const from = receiver.received.length;
    await page.getByLabel("Test event type").selectOption("contact.created");
    await page.getByRole("button", { name: "Send test event" }).click();
    await textOf(page.getByRole("status").filter({ hasText: "Test contact.created event" })).toMatch(
      /queued\.$/,
    );
    await expect.poll(() => receiver.received.length, { timeout: 30_000 }).toBeGreaterThan(from);
    const sent = receiver.received[from] as (typeof receiver.received)[number];
    const event = constructEvent(sent.body, sent.headers["service-signature"] as string, secret);
    expect(event).toMatchObject({ type: "contact.created", test: true });

    receiver.answer = () => ({ status: 503 });
    await newContact("Failing 1");
    await newContact("Failing 2");
    const failed = page
      .locator("tr[data-delivery]")
      .filter({ hasText: "failed" })
      .filter({ hasNotText: "sent later" });
    await expect
      .poll(
        async () => {
          await page.getByRole("button", { name: "Refresh" }).click();
          await page.waitForLoadState("networkidle");
          return failed.count();
        },
        { timeout: 30_000, interval: 300 },
      )
      .toBe(2);
    receiver.answer = () => ({ status: 200 });
    const before = receiver.received.length;
    for (const row of await failed.all()) await row.getByRole("checkbox").check();
    await page.getByRole("button", { name: "Resend selected" }).click();
    await textOf(page.getByRole("status").filter({ hasText: "resent" })).toBe(
      "2 resent, 0 already pending, 0 refused.",
    );
    await expect.poll(() => receiver.received.length - before, { timeout: 30_000 }).toBe(2);
  });
});

describe("the webhook console in Chromium: editing an endpoint", () => {
  it("edits an endpoint, rotates its secret, enables one that failures disabled, and deletes it", async () => {
    const { page } = await openConsole();
    page.on("dialog", (dialog) => void dialog.accept()); // "Rotate the signing secret?", "Delete …?"
    const created = await api.post("/open/v1/webhook-endpoints", {
      key,
      baseUrl,
      body: { url: "https://edit-me.invalid/hooks" },
    });
    await page.goto(`${baseUrl}/console/#/endpoints/${created.body.id}`);
    await shown(page.getByRole("heading", { level: 1, name: "https://edit-me.invalid/hooks" }));

    await page.getByRole("button", { name: "Edit" }).click();
    await page.getByLabel("URL").fill("https://edited.invalid/hooks");
    await page.getByLabel("Description").fill("edited in the console");
    await page.getByRole("button", { name: "Save" }).click();
    await shown(page.getByRole("heading", { level: 1, name: "https://edited.invalid/hooks" }));
    const saved = await api.get(`/open/v1/webhook-endpoints/${created.body.id}`, { key, baseUrl });
    expect(saved.body).toMatchObject({
      url: "https://edited.invalid/hooks",
      description: "edited in the console",
    });

    await page.getByRole("button", { name: "Rotate secret" }).click();
    await textOf(page.locator(".secret")).toMatch(/^whsec_/);
    expect(await page.locator(".secret").textContent()).not.toBe(created.body.secret);

    // As deliveries leave an endpoint after 15 failures (webhooks/endpoints/health.ts).
    await deployment.db.collection<{ _id: string }>("webhook_endpoints").updateOne(
      { _id: created.body.id },
      {
        $set: {
          status: "disabled",
          disabled_at: new Date(),
          disabled_reason: "consecutive_failures",
        },
      },
    );
    await page.reload();
    await textOf(page.locator(".facts")).toContain("too many failed deliveries in a row");
    await page.getByRole("button", { name: "Enable" }).click();
    await shown(page.getByRole("button", { name: "Pause" }));
    expect(
      (await api.get(`/open/v1/webhook-endpoints/${created.body.id}`, { key, baseUrl })).body.status,
    ).toBe("enabled");

    // Enabled, with its last three deliveries failed: the list says so beside the status.
    await deployment.db
      .collection<{ _id: string }>("webhook_endpoints")
      .updateOne({ _id: created.body.id }, { $set: { consecutive_failures: 3 } });
    await page.getByRole("link", { name: "Webhook endpoints" }).first().click();
    const listed = page.getByRole("row").filter({ hasText: "https://edited.invalid/hooks" });
    await textOf(listed).toContain("enabled failing: 3 in a row");
    await listed.getByRole("link", { name: "https://edited.invalid/hooks" }).click();

    await page.getByRole("button", { name: "Delete" }).click();
    await shown(page.getByRole("heading", { level: 1, name: "Webhook endpoints" }));
    await countOf(page.getByRole("link", { name: "https://edited.invalid/hooks" })).toBe(0);
    expect((await api.get(`/open/v1/webhook-endpoints/${created.body.id}`, { key, baseUrl })).status).toBe(
      404,
    );
  });
});

describe("the webhook console in Chromium: refused sessions", () => {
  it("refuses a link used twice, an expired session and another workspace's ids", async () => {
    const { page, url } = await openConsole();
    await shown(page.getByRole("heading", { level: 1, name: "Webhook endpoints" }));

    const again = await (await newContext(browser)).newPage();
    contexts.push(again.context());
    await again.goto(url);
    await shown(again.getByRole("heading", { level: 1, name: "No console session" }));
    await textOf(again.getByRole("alert")).toContain("already used or has expired");

    const other = await newWorkspace(undefined, baseUrl);
    const theirs = await api.post("/open/v1/webhook-endpoints", {
      key: other.key,
      baseUrl,
      body: { url: "https://theirs.invalid/hooks" },
    });
    await page.goto(`${baseUrl}/console/#/endpoints/${theirs.body.id}`);
    await textOf(page.getByRole("alert")).toContain(`No such webhook endpoint: '${theirs.body.id}'`);
    await countOf(page.getByText("theirs.invalid")).toBe(0);

    await deployment.db
      .collection("console_sessions")
      .updateMany({ workspace_id: workspaceId }, { $set: { expires_at: new Date(Date.now() - 1000) } });
    await page.goto(`${baseUrl}/console/#/endpoints`);
    await page.reload();
    await shown(page.getByRole("heading", { level: 1, name: "No console session" }));
  });
});

describe("the webhook console in Chromium: adding endpoints by keyboard and with Ed25519", () => {
  it("adds an endpoint with the keyboard alone", async () => {
    const { page } = await openConsole();
    await shown(page.getByRole("heading", { level: 1, name: "Webhook endpoints" }));
    // What has the keyboard's focus: its text, or a field's name.
    type Focusable = { textContent?: string; name?: string };
    const focused = () =>
      page.evaluate(() => {
        const active = (globalThis as { document?: { activeElement?: Focusable } }).document?.activeElement;
        return active?.name || active?.textContent || "";
      });
    for (let tab = 0; tab < 10 && (await focused()) !== "Add endpoint"; tab += 1)
      await page.keyboard.press("Tab");
    expect(await focused()).toBe("Add endpoint");
    await page.keyboard.press("Enter");
    await expect.poll(focused, { timeout: 10_000 }).toBe("url"); // the form opens with the URL field focused
    await page.keyboard.press("Control+A");
    await page.keyboard.type("https://keyboard.invalid/hooks");
    await page.keyboard.press("Tab"); // Events: "All events" stays selected
    await page.keyboard.press("Tab");
    await page.keyboard.type("added without a mouse");
    await page.keyboard.press("Enter");
    await textOf(page.locator(".secret")).toMatch(/^whsec_/);
    await shown(page.getByRole("link", { name: "https://keyboard.invalid/hooks", exact: true }));
    const listed = await api.get("/open/v1/webhook-endpoints", { key, baseUrl, query: { limit: 100 } });
    const added = listed.body.data.find(
      (endpoint: { url: string }) => endpoint.url === "https://keyboard.invalid/hooks",
    );
    expect(added).toMatchObject({ events: ["*"], description: "added without a mouse" });
  });

  it("adds an endpoint that signs with Ed25519: its public key is shown, with Copy, on adding and on its page", async () => {
    const { page } = await openConsole();
    const url = `${receiver.url}/ed25519`;
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await page.getByLabel("URL").fill(url);
    await page.getByLabel("Signing").selectOption("ed25519");
    await page.getByRole("button", { name: "Save" }).click();
    await textOf(page.locator(".secret")).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    const publicKey = (await page.locator(".secret").textContent()) as string;
    await textOf(page.locator(".notice")).toContain("public key");
    const listed = await api.get("/open/v1/webhook-endpoints", { key, baseUrl });
    const endpoint = listed.body.data.find((e: { url: string }) => e.url === url);
    expect(endpoint).toMatchObject({ signing: "ed25519", public_key: publicKey });

    await page.getByRole("link", { name: url, exact: true }).click();
    await shown(page.getByRole("heading", { level: 1, name: url }));
    const facts = page.locator("dl.facts");
    await textOf(facts).toContain("Ed25519 key pair (v1a)");
    await textOf(facts).toContain(publicKey);
    await shown(facts.getByRole("button", { name: "Copy" }));
    expect((await api.delete(`/open/v1/webhook-endpoints/${endpoint.id}`, { key, baseUrl })).status).toBe(
      200,
    );
  });
});

describe("the webhook console in Chromium: signing out, a phone's width and accessibility", () => {
  it("signs out", async () => {
    const { page } = await openConsole();
    await shown(page.getByRole("heading", { level: 1, name: "Webhook endpoints" }));
    await page.getByRole("button", { name: "Sign out" }).click();
    await shown(page.getByRole("heading", { level: 1, name: "No console session" }));
    await page.reload();
    await shown(page.getByRole("heading", { level: 1, name: "No console session" }));
  });

  it("opens the link `deskline console --json` prints, and fits a phone's width (390 px)", async () => {
    const { key: manager } = await newWorkspace(["webhooks:manage"], baseUrl);
    const printed = await runToEnd(process.execPath, [CLI, "console", "--json"], {
      cwd: tmpdir(),
      env: { ...process.env, DESKLINE_API_KEY: manager, DESKLINE_BASE_URL: baseUrl },
    });
    expect(printed.code, printed.output).toBe(0);
    const { url } = JSON.parse(printed.output) as { url: string };
    const { page } = await openLink(url, { width: 390, height: 844 });
    await shown(page.getByRole("heading", { level: 1, name: "Webhook endpoints" }));
    expect(await pageWidth(page)).toBeLessThanOrEqual(390);

    // The page with the most in it: the receiver's endpoint, its chart, deliveries and filters.
    const { page: full } = await openConsole(workspaceId, { width: 390, height: 844 });
    await shown(full.getByRole("heading", { level: 1, name: "Webhook endpoints" }));
    await full.getByRole("link", { name: receiver.url, exact: true }).click();
    await shown(full.getByRole("heading", { name: "Deliveries", exact: true }));
    await full.locator("tr[data-delivery]").first().waitFor();
    expect(await pageWidth(full)).toBeLessThanOrEqual(390);
  });

  it("has no serious or critical axe-core violation on any page", async () => {
    const { page } = await openConsole();
    const scans: Record<string, unknown> = {};
    await shown(page.getByRole("link", { name: receiver.url, exact: true }));
    await page.getByRole("button", { name: "Add endpoint" }).click();
    scans.endpoints = await seriousViolations(page);

    await page.getByRole("link", { name: receiver.url, exact: true }).click();
    await page.locator("tr[data-delivery]").first().getByRole("button", { name: "Details" }).click();
    await shown(page.locator("table.attempts"));
    await page.getByRole("button", { name: "Edit" }).click();
    scans.endpoint = await seriousViolations(page);

    await page.getByRole("link", { name: "Events", exact: true }).click();
    await shown(page.locator("ul.went").first());
    scans.events = await seriousViolations(page);

    await page.locator("tbody tr").first().getByRole("link").first().click();
    await shown(page.locator("pre.payload"));
    scans.event = await seriousViolations(page);

    const signedOut = await (await newContext(browser)).newPage();
    contexts.push(signedOut.context());
    await signedOut.goto(`${baseUrl}/console/`);
    await shown(signedOut.getByRole("heading", { name: "No console session" }));
    scans.signedOut = await seriousViolations(signedOut);

    expect(scans).toEqual({ endpoints: [], endpoint: [], events: [], event: [], signedOut: [] });
  });
});

describe("the webhook console in Chromium: what the browser logged", () => {
  it("logged no error and fetched nothing from elsewhere", () => {
    // The refusals above answer 401 and 404 on purpose; the browser logs those responses.
    expect(problems.filter((problem) => !/status of (401|404)/.test(problem))).toEqual([]);
  });
});
