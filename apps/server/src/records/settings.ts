/** How an incremental pull (records/pull.ts) keeps from passing over a write still committing. */

import { integer, settingGroup } from "../platform/settings.js";

export const pullSettings = settingGroup({
  syncSettleMs: integer("SYNC_SETTLE_MS", {
    default: 1_000,
    doc: "how long after its `updated_at` a write is surely committed (stamp-to-commit time plus clock skew between API processes): an incremental pull answers a page whose last change is younger only once it is this old; raise it where clocks drift more",
  }),
});
export type PullSettings = ReturnType<typeof pullSettings.read>;
