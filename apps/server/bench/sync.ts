import { cpus } from "node:os";
import { newRunId, seedMany, startBenchDatabase, startScenarioServer } from "./environment.js";

/**
 * `pnpm bench` (after run.ts): a CRM sync at scale, in one process. 10,000 contacts reach the
 * server through batch upserts (100 per request) against the baseline of one create per contact,
 * each on a fresh database; then the incremental pull of those 10,000 changed contacts against the
 * newest-first list walked with `starting_after`, the only way to read them all before the pull.
 * Prints the rates and the ratios. Not a test: it asserts nothing about speed.
 *
 *   BENCH_SYNC_CONTACTS=10000   how many contacts
 *   MONGODB_URI=...             a real deployment instead of the embedded database
 */
const COUNT = Number(process.env.BENCH_SYNC_CONTACTS ?? 10_000);
const BATCH = 100;
const CONCURRENCY = 16;
const BATCH_CONCURRENCY = 4;

const log = (line: string) => process.stderr.write(`${line}\n`);

const contactBody = (runId: string, n: number) => ({
  name: `Sync Contact ${n}`,
  email: `sync-${runId}-${n}@example.com`,
  tags: ["crm", `cohort-${n % 10}`],
  custom_fields: { plan: "pro", seats: n % 50 },
  external_ids: { crm: `${runId}-${n}` },
});

async function timed<T>(work: () => Promise<T>): Promise<{ seconds: number; result: T }> {
  const started = performance.now();
  const result = await work();
  return { seconds: (performance.now() - started) / 1000, result };
}

type Api = <T = unknown>(method: string, path: string, body?: unknown) => Promise<T>;
type ListPage = { data: { id: string }[]; has_more: boolean; next_cursor?: string };

/** Reads pages until `has_more` is false; returns how many records came. */
async function readAll(api: Api, first: string, next: (page: ListPage) => string): Promise<number> {
  let seen = 0;
  for (let path = first; ; ) {
    const page = await api<ListPage>("GET", path);
    seen += page.data.length;
    if (!page.has_more) return seen;
    path = next(page);
  }
}

async function main(): Promise<void> {
  const database = await startBenchDatabase();
  const runId = newRunId();
  const rows: string[] = [];
  try {
    const oneByOne = await startScenarioServer(database.uri, `deskline_bench_sync_a_${runId}`, runId);
    let creates: number;
    try {
      log(`one-by-one: ${COUNT} POST /open/v1/contacts, ${CONCURRENCY} at a time…`);
      const { seconds } = await timed(() =>
        seedMany(oneByOne.context, COUNT, "/open/v1/contacts", (n) => contactBody(runId, n), CONCURRENCY),
      );
      creates = COUNT / seconds;
    } finally {
      await oneByOne.stop();
    }

    const batched = await startScenarioServer(database.uri, `deskline_bench_sync_b_${runId}`, runId);
    try {
      const { api } = batched.context;
      log(
        `batch: ${COUNT / BATCH} POST /open/v1/contacts/batch of ${BATCH}, ${BATCH_CONCURRENCY} at a time…`,
      );
      let next = 0;
      const worker = async () => {
        while (next < COUNT) {
          const from = next;
          next += BATCH;
          const contacts = Array.from({ length: Math.min(BATCH, COUNT - from) }, (_, i) =>
            contactBody(`${runId}b`, from + i),
          );
          const answer = await api<{ data: { status: string }[] }>("POST", "/open/v1/contacts/batch", {
            match: "external_ids.crm",
            contacts,
          });
          const failed = answer.data.filter((item) => item.status !== "created");
          if (failed.length) throw new Error(`batch item not created: ${JSON.stringify(failed[0])}`);
        }
      };
      const upsert = await timed(() => Promise.all(Array.from({ length: BATCH_CONCURRENCY }, worker)));
      const batches = COUNT / upsert.seconds;

      log(`pull: ${COUNT} changed contacts, 100 per page, against the newest-first list…`);
      const pull = await timed(() =>
        readAll(
          api,
          "/open/v1/contacts?updated_after=0&limit=100",
          (page) => `/open/v1/contacts?cursor=${page.next_cursor}&limit=100`,
        ),
      );
      const list = await timed(() =>
        readAll(
          api,
          "/open/v1/contacts?limit=100",
          (page) => `/open/v1/contacts?limit=100&starting_after=${page.data.at(-1)?.id}`,
        ),
      );
      if (pull.result !== COUNT || list.result !== COUNT) {
        throw new Error(`read ${pull.result} by pull and ${list.result} by list, expected ${COUNT}`);
      }
      const rate = (seconds: number) => Math.round(COUNT / seconds).toLocaleString("en");
      rows.push(
        `| create ${COUNT.toLocaleString("en")} contacts | one POST per contact, ${CONCURRENCY} at a time: ${rate(COUNT / creates)}/s | batches of ${BATCH}, ${BATCH_CONCURRENCY} at a time: ${rate(upsert.seconds)}/s | ${(batches / creates).toFixed(1)}× |`,
        `| read ${COUNT.toLocaleString("en")} changed contacts | newest-first list, \`starting_after\`: ${list.seconds.toFixed(1)} s | pull, \`cursor\`: ${pull.seconds.toFixed(1)} s (${rate(pull.seconds)}/s) | ${(list.seconds / pull.seconds).toFixed(1)}× |`,
      );
    } finally {
      await batched.stop();
    }
  } finally {
    await database.stop();
  }
  process.stdout.write(
    `\nCRM sync (Node ${process.versions.node}, ${cpus().length} CPUs)\n\n| work | baseline | sync | ratio |\n|---|--:|--:|--:|\n${rows.join("\n")}\n`,
  );
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
