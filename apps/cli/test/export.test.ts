// `deskline contacts export` and `tickets export` against the real server: the round trip
// (export, import into another workspace, export again), every column kind, paging past one
// page, filters, --fields, --output and the usage errors.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { api, newWorkspace } from "@deskline/test-kit";
import { parse } from "csv-parse/sync";
import { beforeEach, describe, expect, it } from "vitest";
import { BIN, cli, cliEnv, jsonLines, scratch, spawnCli, writeScratch } from "./helpers.js";

let key: string;
let dir: string;

beforeEach(async () => {
  ({ key } = await newWorkspace());
  dir = scratch();
});

// Every column kind the import reads: lists, booleans, a date, map keys (one only on some rows),
// address parts, quotes, a comma and a newline inside a cell.
const CSV = [
  "name,email,phone,tags,segments,lifecycle_stage,do_not_contact,birthday,custom_fields.plan,custom_fields.note,external_ids.crm,address.city,address.country",
  'Ada Lovelace,ada@example.com,+44 20 7946 0123,vip;beta,emea|enterprise,customer,yes,1815-12-10,pro,"Likes ""engines"", math",crm-1,London,GB',
  'Grace Hopper,grace@example.com,,navy,,lead,no,,free,"line one',
  'line two",crm-2,,US',
  "Alan Turing,alan@example.com,,,,,,,,,,Manchester,",
].join("\n");

const rowsOf = (csv: string): Record<string, string>[] => parse(csv, { columns: true });

/** Rows without what the API sets, in a stable order: what must survive a round trip. */
const comparable = (rows: Record<string, unknown>[]) =>
  rows
    .map(({ id, created_at, updated_at, ...rest }) => {
      expect(id).toMatch(/^con_/);
      expect(typeof created_at).toBe("string");
      expect(typeof updated_at).toBe("string");
      return rest;
    })
    .sort((a, b) => String(a.email).localeCompare(String(b.email)));

async function exportOf(apiKey: string, args: string[]) {
  const result = await cli(["contacts", "export", ...args], { key: apiKey });
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  return result.stdout;
}

async function importInto(apiKey: string, file: string, rows: number) {
  const result = await cli(["contacts", "import", file, "--json"], { key: apiKey });
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  expect(JSON.parse(result.stdout)).toMatchObject({ rows, created: rows, failed: 0 });
}

describe("contacts export: CSV round trips", () => {
  it("round-trips as CSV: export, import into another workspace, export again gives the same rows", async () => {
    await importInto(key, writeScratch(dir, "people.csv", CSV), 3);
    // A number in custom_fields, set through the API, comes back as its text.
    const created = await api.post("/open/v1/contacts", {
      key,
      body: { name: "Edsger Dijkstra", email: "edsger@example.com", custom_fields: { seats: 5 } },
    });
    expect(created.status).toBe(201);

    const first = await exportOf(key, []);
    const header = first.split("\n")[0];
    expect(header).toBe(
      [
        "id,name,email,phone,avatar,website,source,status,group,gender,birthday",
        "address.line1,address.line2,address.city,address.region,address.postal_code,address.country",
        "company,tags,segments,lifecycle_stage,preferred_channel,preferred_language,timezone",
        "do_not_contact,marketing_consent,custom_fields.note,custom_fields.plan,custom_fields.seats",
        "external_ids.crm,created_at,updated_at",
      ].join(","),
    );
    const rows = rowsOf(first);
    expect(rows).toHaveLength(4);
    const ada = rows.find((row) => row.email === "ada@example.com");
    expect(ada).toMatchObject({
      name: "Ada Lovelace",
      tags: "vip;beta",
      segments: "emea;enterprise",
      do_not_contact: "true",
      marketing_consent: "false",
      birthday: "1815-12-10",
      "custom_fields.plan": "pro",
      "custom_fields.note": 'Likes "engines", math',
      "custom_fields.seats": "",
      "external_ids.crm": "crm-1",
      "address.city": "London",
      "address.line1": "",
    });
    expect(rows.find((row) => row.email === "grace@example.com")?.["custom_fields.note"]).toBe(
      "line one\nline two",
    );
    expect(rows.find((row) => row.email === "edsger@example.com")?.["custom_fields.seats"]).toBe("5");

    const other = (await newWorkspace()).key;
    await importInto(other, writeScratch(dir, "export.csv", first), 4);
    const second = await exportOf(other, []);
    expect(second.split("\n")[0]).toBe(header);
    const again = rowsOf(second);
    // New ids and time stamps; everything else as it was.
    expect(again.map((row) => row.id).filter((id) => rows.some((r) => r.id === id))).toEqual([]);
    expect(comparable(again)).toEqual(comparable(rows));
  });
});

describe("contacts export: cells a spreadsheet would run", () => {
  it("escapes cells a spreadsheet would run as formulas, and the import reads them back to the same values", async () => {
    const people = [
      {
        name: '=HYPERLINK("https://evil.example.invalid","click")',
        email: "f1@example.com",
        phone: "+1 555 010 0100",
      },
      { name: "@SUM(1+1)", email: "f2@example.com", company: "-minus", custom_fields: { balance: "-12.5" } },
      { name: "'=quoted already", email: "f3@example.com", company: "'Tis a company" },
      { name: "\tTabbed", email: "f4@example.com", tags: ["=tag", "plain"] },
    ];
    for (const body of people) expect((await api.post("/open/v1/contacts", { key, body })).status).toBe(201);
    const fields = "name,email,phone,company,tags,custom_fields.balance";

    const csv = await exportOf(key, ["--fields", fields]);
    const cells = rowsOf(csv);
    const byEmail = (rows: Record<string, string>[], email: string) => rows.find((r) => r.email === email);
    expect(byEmail(cells, "f1@example.com")).toMatchObject({
      name: `'=HYPERLINK("https://evil.example.invalid","click")`,
      phone: "'+1 555 010 0100",
    });
    expect(byEmail(cells, "f2@example.com")).toMatchObject({
      name: "'@SUM(1+1)",
      company: "'-minus",
      "custom_fields.balance": "'-12.5",
    });
    expect(byEmail(cells, "f3@example.com")).toMatchObject({
      name: "''=quoted already",
      company: "'Tis a company",
    });
    expect(byEmail(cells, "f4@example.com")).toMatchObject({ name: "'\tTabbed", tags: "'=tag;plain" });
    // No cell begins with what a spreadsheet evaluates.
    for (const row of cells) for (const cell of Object.values(row)) expect(cell).not.toMatch(/^[=+\-@\t\r]/);

    // The import reads the file back to the very values the API holds.
    const other = (await newWorkspace()).key;
    await importInto(other, writeScratch(dir, "formulas.csv", csv), people.length);
    const again = await exportOf(other, ["--fields", fields, "--format", "jsonl"]);
    const original = await exportOf(key, ["--fields", fields, "--format", "jsonl"]);
    const sorted = (text: string) =>
      jsonLines(text).sort((a, b) => String(a.email).localeCompare(String(b.email)));
    expect(sorted(again)).toEqual(sorted(original));
    // JSON Lines are not escaped; and --no-escape-formulas writes CSV cells as they are.
    expect(sorted(original)[0]).toMatchObject({ name: '=HYPERLINK("https://evil.example.invalid","click")' });
    const raw = rowsOf(await exportOf(key, ["--fields", fields, "--no-escape-formulas"]));
    expect(byEmail(raw, "f2@example.com")).toMatchObject({
      name: "@SUM(1+1)",
      "custom_fields.balance": "-12.5",
    });
  });
});

describe("contacts export: JSON Lines, paging and filters", () => {
  it("round-trips as JSON Lines, keeping JSON types", async () => {
    await importInto(key, writeScratch(dir, "people.csv", CSV), 3);
    const first = jsonLines(await exportOf(key, ["--format", "jsonl"]));
    expect(first).toHaveLength(3);
    const ada = first.find((row) => row.email === "ada@example.com");
    expect(ada).toMatchObject({
      tags: ["vip", "beta"],
      do_not_contact: true,
      "custom_fields.plan": "pro",
      "external_ids.crm": "crm-1",
      "address.country": "GB",
      phone: "+44 20 7946 0123",
      avatar: null,
    });
    // A part or key the contact lacks is left out, not written as null.
    expect(ada).not.toHaveProperty("address.line1");
    expect(first.find((row) => row.email === "alan@example.com")).not.toHaveProperty("custom_fields.plan");

    const other = (await newWorkspace()).key;
    const file = writeScratch(dir, "export.jsonl", first.map((row) => JSON.stringify(row)).join("\n"));
    await importInto(other, file, 3);
    const second = jsonLines(await exportOf(other, ["--format", "jsonl"]));
    expect(comparable(second)).toEqual(comparable(first));
  });

  it("pages through every contact, applies the list's filters and --limit", async () => {
    const contacts = await seed(230, (i) => (i % 10 === 0 ? ["vip"] : []));
    const all = rowsOf(await exportOf(key, ["--fields", "email"]));
    expect(all).toHaveLength(230);
    expect(new Set(all.map((row) => row.email)).size).toBe(230);
    // Newest first, as the list gives them.
    expect(all[0]?.email).toBe("person-229@example.com");

    const vip = rowsOf(await exportOf(key, ["--tag", "vip", "--fields", "email,tags"]));
    expect(vip.map((row) => row.email).sort()).toEqual(
      contacts
        .filter((c) => c.tags.length)
        .map((c) => c.email)
        .sort(),
    );
    expect(vip.every((row) => row.tags === "vip")).toBe(true);

    expect(rowsOf(await exportOf(key, ["--limit", "150", "--fields", "email"]))).toHaveLength(150);
    expect(await exportOf(key, ["--limit", "0", "--fields", "email,name"])).toBe("email,name\n");
  });
});

describe("contacts export: fields, output files, and refusals", () => {
  it("writes --fields in the order given, and --output complete with a summary", async () => {
    await importInto(key, writeScratch(dir, "people.csv", CSV), 3);
    const output = join(dir, "out.csv");
    const result = await cli(
      [
        "contacts",
        "export",
        "--fields",
        "email, custom_fields.plan,address.city,tags",
        "--output",
        output,
        "--search",
        "ada",
        "--json",
      ],
      { key },
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ rows: 1, format: "csv", output });
    expect(readFileSync(output, "utf8")).toBe(
      "email,custom_fields.plan,address.city,tags\nada@example.com,pro,London,vip;beta\n",
    );
    // Only the file: no partial file left beside it.
    expect(readdirSync(dir).filter((name) => name.includes("partial"))).toEqual([]);

    const human = await cli(["contacts", "export", "--format", "jsonl", "-o", output], { key });
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^exported +3 contacts$/m);
    expect(jsonLines(readFileSync(output, "utf8"))).toHaveLength(3);
  });

  it("refuses unknown fields, whole maps and unknown formats with exit 2, writing nothing", async () => {
    const output = join(dir, "never.csv");
    const unknown = await cli(["contacts", "export", "--fields", "email,shoe_size", "-o", output, "--json"], {
      key,
    });
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe("");
    expect(JSON.parse(unknown.stderr)).toEqual({
      error: { code: "usage_error", message: expect.stringContaining("unknown field 'shoe_size'") },
    });
    expect(existsSync(output)).toBe(false);

    const whole = await cli(["contacts", "export", "--fields", "custom_fields"], { key });
    expect(whole.code).toBe(2);
    expect(whole.stderr).toContain("custom_fields.<key>");

    const format = await cli(["contacts", "export", "--format", "xlsx"], { key });
    expect(format.code).toBe(2);
    expect(format.stderr).toContain("xlsx");
    expect(format.stdout).toBe("");
  });

  it("reports an API error with exit 1 and leaves no file", async () => {
    const output = join(dir, "never.csv");
    const result = await cli(["contacts", "export", "-o", output, "--json"], { key: "dk_test_not_a_key" });
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stderr).error).toMatchObject({ status: 401 });
    expect(existsSync(output)).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
  });
});

/** `count` contacts through the batch upsert, 100 a request. */
async function seed(count: number, tag = (_i: number) => [] as string[]) {
  const contacts = Array.from({ length: count }, (_, i) => ({
    name: `Person ${i}`,
    email: `person-${i}@example.com`,
    tags: tag(i),
  }));
  for (let start = 0; start < contacts.length; start += 100) {
    const batch = await api.post("/open/v1/contacts/batch", {
      key,
      body: { match: "email", contacts: contacts.slice(start, start + 100) },
    });
    expect(batch.status).toBe(200);
  }
  return contacts;
}

describe("contacts export on a terminal and in a pipe", () => {
  it("draws its progress on stderr only when stderr is a terminal", async () => {
    await seed(120);
    const output = join(dir, "tty.csv");
    // `script` gives the command a pseudo-terminal, as an ops person's shell would.
    const command = [process.execPath, BIN, "contacts", "export", "--output", output]
      .map((word) => `'${word}'`)
      .join(" ");
    const run = spawnSync("script", ["-q", "-e", "-c", command, "/dev/null"], {
      env: cliEnv({ key }),
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/\d+ rows \| \d+ rows\/s/);
    expect(rowsOf(readFileSync(output, "utf8"))).toHaveLength(120);
  });

  it("stops quietly, exit 0, when the reader goes away (| head)", async () => {
    await seed(400);
    const { child, result } = spawnCli(["contacts", "export", "--format", "jsonl"], { key });
    child.stdout.once("data", () => child.stdout.destroy());
    const { code, stderr } = await result;
    expect(stderr).toBe("");
    expect(code).toBe(0);
  });
});

describe("tickets export", () => {
  it("writes the ticket columns, filtered like tickets list", async () => {
    for (const [subject, status, tags] of [
      ["Printer on fire", "Solved", ["billing", "urgent"]],
      ["Refund", "New", []],
    ] as const) {
      const created = await api.post("/open/v1/tickets", { key, body: { subject, status, tags } });
      expect(created.status).toBe(201);
    }
    const csv = await cli(["tickets", "export"], { key });
    expect(csv.stderr).toBe("");
    expect(csv.code).toBe(0);
    expect(csv.stdout.split("\n")[0]).toBe(
      "id,subject,type,priority,status,category,sentiment,contact_id,conversation_id,assignee_id,tags,notes,language,due_at,solved_at,closed_at,created_at,updated_at",
    );
    const rows = rowsOf(csv.stdout);
    expect(rows.map((row) => row.subject)).toEqual(["Refund", "Printer on fire"]);
    expect(rows[1]).toMatchObject({ status: "Solved", tags: "billing;urgent", closed_at: "" });
    expect(rows[1]?.solved_at).toMatch(/^\d{4}-\d\d-\d\dT/);

    const solved = await cli(
      ["tickets", "export", "--status", "Solved", "--format", "jsonl", "--fields", "subject,tags"],
      {
        key,
      },
    );
    expect(solved.code).toBe(0);
    expect(jsonLines(solved.stdout)).toEqual([{ subject: "Printer on fire", tags: ["billing", "urgent"] }]);
  });
});
