import { SCOPES } from "./db/api-keys.js";
import type { Store } from "./db/store.js";

/** `pnpm start` on a fresh machine: a workspace and a key with every scope, ready to curl. */
export async function createDemoWorkspace(store: Store): Promise<{ workspaceId: string; key: string }> {
  const workspace = await store.workspaces.create("Demo workspace");
  const { key } = await store.apiKeys.create(workspace._id, "demo key (pnpm start)", [...SCOPES]);
  return { workspaceId: workspace._id, key };
}
