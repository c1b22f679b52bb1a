import { mkdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A real mongod through mongodb-memory-server, the embedded database's first choice (docs/design.md, Database),
 * and the quick "can it be had at all?" decision in front of it. Left to itself the library spends
 * about 7 s retrying a download that cannot succeed offline; here a missing binary is only
 * downloaded after its URL answered a short probe, and a failure is remembered for an hour, so an
 * offline start waits at most PROBE_TIMEOUT_MS (and nothing on the next start).
 */

const PROBE_TIMEOUT_MS = 700;
const REMEMBER_FAILURE_MS = 3_600_000;
const MEMO_FILE = join(tmpdir(), "deskline-mongod-download.json");

export interface EmbeddedMongod {
  uri: string;
  stop(): Promise<void>;
}

/** Why no mongod could be had; the caller falls back and logs this as the reason. */
export class MongodUnavailable extends Error {}

export interface Memo {
  url: string;
  failedAt: number;
  reason: string;
}

/**
 * Starts mongod: a cached binary at once; otherwise downloads it, unless the download is known
 * (remembered) or found (probed) to be impossible, which throws MongodUnavailable.
 * `force` skips the memo and the probe: the download is attempted whatever they say.
 * `dbPath` keeps the data there (WiredTiger, left in place on stop); without it the data lives
 * in a temporary directory removed on stop.
 */
export async function startMongod(
  options: { force?: boolean; dbPath?: string } = {},
): Promise<EmbeddedMongod> {
  // Imported lazily: deployments with MONGODB_URI never load it.
  const { DryMongoBinary, MongoBinary, MongoMemoryServer } = await import("mongodb-memory-server-core");
  const binaryOptions = await DryMongoBinary.generateOptions();
  if (!(await DryMongoBinary.locateBinary(binaryOptions))) {
    const url = await downloadUrl(binaryOptions);
    if (!options.force) await assertDownloadable(url);
    try {
      await MongoBinary.getPath(binaryOptions);
    } catch (error) {
      const reason = `downloading ${url} failed (${oneLine(error)})`;
      await remember({ url, failedAt: Date.now(), reason });
      throw new MongodUnavailable(reason);
    }
  }
  const { dbPath } = options;
  if (dbPath) await mkdir(dbPath, { recursive: true });
  // WiredTiger named, not left to the library: before mongod 7 its default is the in-memory
  // "ephemeralForTest" engine, which would keep nothing in dbPath.
  const server = await MongoMemoryServer.create(
    dbPath ? { instance: { dbPath, storageEngine: "wiredTiger" } } : {},
  );
  return {
    uri: server.getUri(),
    stop: async () => {
      // `force` would remove even a dbPath of ours; the temporary one goes with doCleanup alone.
      await server.stop({ doCleanup: !dbPath, force: false });
    },
  };
}

async function downloadUrl(binaryOptions: {
  version: string;
  platform: string;
  arch: string;
  os: unknown;
}): Promise<string> {
  // Not re-exported by the package's index; the same URL its downloader will fetch.
  const { MongoBinaryDownloadUrl } = await import(
    "mongodb-memory-server-core/lib/util/MongoBinaryDownloadUrl.js"
  );
  return new MongoBinaryDownloadUrl(binaryOptions as never).getDownloadUrl();
}

/** Throws MongodUnavailable when a recent attempt failed or the URL does not answer quickly. */
async function assertDownloadable(url: string): Promise<void> {
  const memo = await recall();
  const now = Date.now();
  if (memo && rememberedFailure(memo, url, now)) {
    const minutes = Math.round((now - memo.failedAt) / 60_000);
    throw new MongodUnavailable(
      `${memo.reason} ${minutes} min ago (remembered for an hour in ${MEMO_FILE}; delete it to retry now)`,
    );
  }
  try {
    // Any HTTP answer means the host is reachable; only the network failing counts.
    await fetch(url, { method: "HEAD", redirect: "manual", signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause ?? error;
    const reason = `${new URL(url).host} is unreachable (${oneLine(cause)})`;
    await remember({ url, failedAt: Date.now(), reason });
    throw new MongodUnavailable(reason);
  }
}

/**
 * Whether `memo` still stands for `url` at `now`: a failure of the last hour. One stamped after
 * `now` does not: a process whose clock ran ahead wrote it (the tests run servers and whole
 * files 60 days on), or the clock went back since; it would hold until that time came.
 */
export function rememberedFailure(memo: Memo, url: string, now: number): boolean {
  const age = now - memo.failedAt;
  return memo.url === url && age >= 0 && age < REMEMBER_FAILURE_MS;
}

async function recall(): Promise<Memo | undefined> {
  try {
    return JSON.parse(await readFile(MEMO_FILE, "utf8")) as Memo;
  } catch {
    return undefined;
  }
}

async function remember(memo: Memo): Promise<void> {
  // Only an optimisation: a read-only temp dir just means probing again next time.
  await writeFile(MEMO_FILE, JSON.stringify(memo)).catch(() => {});
}

/** An error as one short line: download errors span several lines with their details last. */
function oneLine(error: unknown): string {
  const text = error instanceof Error ? `${error.message}` : String(error);
  return text.replace(/\s+/g, " ").slice(0, 200);
}
