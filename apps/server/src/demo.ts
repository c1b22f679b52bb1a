import { readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Store } from "./store.js";
import { SCOPES } from "./workspaces/api-keys.js";

/**
 * `pnpm start`'s demo workspace and a key with every scope, ready to curl. With a data directory
 * (the embedded database keeping its data) the same workspace and key come back at every start:
 * the key is kept in `<dataDir>/demo-workspace.json`, readable by its owner only (0600), next to the
 * data it opens, so a `curl` copied from yesterday's banner still works. The database itself still
 * holds only the key's hash. Without one (`--ephemeral`, MONGODB_URI) each start makes a new
 * workspace and shows its key once.
 */

export const DEMO_FILE = "demo-workspace.json";

export interface DemoWorkspace {
  workspaceId: string;
  key: string;
  /** Found from an earlier start rather than made now. */
  reused: boolean;
  /** Where the key is kept; undefined when it is shown once only. */
  keyFile: string | undefined;
}

interface Saved {
  workspace_id: string;
  key: string;
}

export async function openDemoWorkspace(store: Store, dataDir?: string): Promise<DemoWorkspace> {
  if (!dataDir) return { ...(await create(store)), reused: false, keyFile: undefined };
  const keyFile = join(dataDir, DEMO_FILE);
  const saved = await recall(keyFile);
  if (saved && (await store.workspaces.exists(saved.workspace_id))) {
    const live = await store.apiKeys.authenticate(saved.key);
    if (live?.workspace_id === saved.workspace_id)
      return { workspaceId: saved.workspace_id, key: saved.key, reused: true, keyFile };
    // The workspace is there but its key was revoked: a new key for the same workspace.
    const { key } = await newKey(store, saved.workspace_id);
    await save(keyFile, { workspace_id: saved.workspace_id, key });
    return { workspaceId: saved.workspace_id, key, reused: true, keyFile };
  }
  const made = await create(store);
  await save(keyFile, { workspace_id: made.workspaceId, key: made.key });
  return { ...made, reused: false, keyFile };
}

async function create(store: Store): Promise<{ workspaceId: string; key: string }> {
  const workspace = await store.workspaces.create("Demo workspace");
  const { key } = await newKey(store, workspace._id);
  return { workspaceId: workspace._id, key };
}

function newKey(store: Store, workspaceId: string) {
  return store.apiKeys.create(workspaceId, "demo key (pnpm start)", [...SCOPES]);
}

async function recall(file: string): Promise<Saved | undefined> {
  try {
    const saved = JSON.parse(await readFile(file, "utf8")) as Partial<Saved>;
    return typeof saved.workspace_id === "string" && typeof saved.key === "string"
      ? (saved as Saved)
      : undefined;
  } catch {
    // Missing or damaged: a new demo workspace, saved over it.
    return undefined;
  }
}

async function save(file: string, saved: Saved): Promise<void> {
  // Written aside and renamed over: a crash never leaves half a file, and the mode is set at creation.
  const aside = `${file}.${process.pid}`;
  await writeFile(aside, `${JSON.stringify(saved, null, 2)}\n`, { mode: 0o600 });
  await rename(aside, file);
}
