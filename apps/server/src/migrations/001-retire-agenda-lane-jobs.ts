import type { Migration } from "../platform/database/migrations.js";

/**
 * Until webhook delivery kept its whole schedule in the delivery records (docs/decisions.md, "One
 * schedule: the delivery records"), each endpoint had an Agenda job (`webhook-endpoint-lane`),
 * a safety-net job looked for lanes that were due, and before those one job per delivery
 * (`webhook-delivery`). No code runs them any more: their documents go, or a worker's Agenda
 * would keep finding them due and failing them.
 */
export const retireAgendaLaneJobs: Migration = {
  id: 1,
  name: "retire-agenda-lane-jobs",
  async up(db, logger) {
    const { deletedCount } = await db.collection("agenda_jobs").deleteMany({
      name: { $in: ["webhook-endpoint-lane", "webhook-lanes-safety-net", "webhook-delivery"] },
    });
    if (deletedCount > 0) logger.info({ jobs: deletedCount }, "removed the retired delivery jobs");
  },
};
