import { type Migration, replaceIndexes } from "../platform/database/migrations.js";

/**
 * An API key's public id (`key_…`) was unique on its own (`public_id_unique`); the unique index
 * now leads with the workspace (`workspace_newest_unique`, `{workspace_id, id}`), as every unique
 * index does so that a sharded cluster can keep it (docs/operations.md, "Indexes"). The ids are
 * random, so no two stored keys share one and no document changes. The new index is built before
 * the old one goes; `workspace_newest`, which it now serves, goes too.
 */
export const apiKeysUniqueInWorkspace: Migration = {
  id: 4,
  name: "api-keys-unique-in-workspace",
  async up(db) {
    await replaceIndexes(
      db,
      "api_keys",
      { key: { workspace_id: 1, id: -1 }, options: { name: "workspace_newest_unique", unique: true } },
      ["public_id_unique", "workspace_newest"],
    );
  },
};
