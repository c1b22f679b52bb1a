import { link, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * The directory where the embedded database keeps its data across restarts (`pnpm start`;
 * `.deskline/data` in the checkout unless DESKLINE_DATA_DIR says otherwise), and the lock that
 * keeps a second server off it. mongod and H2 lock their own files too, but a second process
 * would then see an engine's error (or, for mongod, quietly fall back to the other engine), so
 * the server takes this lock first and fails with a sentence that says what to do.
 */

const LOCK_FILE = "deskline.lock";

/** Another live process holds the data directory. */
export class DataDirInUse extends Error {}

export interface DataDirLock {
  dir: string;
  /** Removes the lock file (only if it is still this process's). */
  release(): Promise<void>;
}

/**
 * Creates `dir` if needed and locks it for this process: a lock file created exclusively, holding
 * the pid. A lock left by a process that no longer runs (a SIGKILL, a crash) is taken over.
 */
export async function lockDataDir(dir: string): Promise<DataDirLock> {
  await mkdir(dir, { recursive: true });
  const lockFile = join(dir, LOCK_FILE);
  // Written aside, then linked into place: link() fails if the lock exists, so the lock file
  // appears with its pid in it, and two processes never both take it.
  const mine = `${lockFile}.${process.pid}`;
  await writeFile(mine, `${process.pid}\n`, { mode: 0o600 });
  try {
    // Twice at most: the second try follows the removal of a dead process's lock.
    for (let attempt = 0; ; attempt++) {
      try {
        await link(mine, lockFile);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        const holder = await lockHolder(lockFile);
        if (attempt > 0 || (holder !== undefined && holder !== process.pid && isAlive(holder))) {
          throw new DataDirInUse(
            `the data directory ${dir} is in use by another Deskline server (pid ${holder ?? "?"}); stop ` +
              "that one, or give this one another place (DESKLINE_DATA_DIR=...) or none (--ephemeral). " +
              `If no such server runs, delete ${lockFile}.`,
          );
        }
        await rm(lockFile, { force: true });
      }
    }
  } finally {
    await rm(mine, { force: true });
  }
  return {
    dir,
    async release() {
      if ((await lockHolder(lockFile)) === process.pid) await rm(lockFile, { force: true });
    },
  };
}

async function lockHolder(lockFile: string): Promise<number | undefined> {
  const text = await readFile(lockFile, "utf8").catch(() => "");
  const pid = Number.parseInt(text, 10);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
