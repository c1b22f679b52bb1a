import { dropIndexIfPresent, type Migration } from "../platform/database/migrations.js";

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
    await db
      .collection("api_keys")
      .createIndex({ workspace_id: 1, id: -1 }, { unique: true, name: "workspace_newest_unique" });
    await dropIndexIfPresent(db, "api_keys", "public_id_unique");
    await dropIndexIfPresent(db, "api_keys", "workspace_newest");
  },
};
