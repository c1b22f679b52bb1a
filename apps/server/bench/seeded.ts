import type { Document } from "mongodb";
import type { RequestContext } from "./environment.js";
import type { Baseline } from "./scenario.js";

/**
 * What the get and patch scenarios of every resource share: which seeded record request `n`
 * reads (a different one each time), and the driver operations they are compared with.
 */

/** One of the dataset's records, spread over all of them (7919 is prime, so no short cycles). */
export function seededId(n: number, { seededIds }: Pick<RequestContext, "seededIds">): string {
  return seededIds[(n * 7919) % seededIds.length] as string;
}

interface Versioned extends Document {
  _id: string;
  workspace_id: string;
  version: number;
}

/** A get: the one document, by id within the workspace. */
export function getByIdBaseline(collection: string): Baseline {
  return {
    label: "findOne({_id, workspace_id})",
    async prepare(context) {
      const records = context.db.collection<Versioned>(collection);
      return (n) => records.findOne({ _id: seededId(n, context), workspace_id: context.workspaceId });
    },
  };
}

/**
 * A patch as the server writes one (records/record.ts): read the document, then update it only if its
 * version is still the one read, setting `field` to a new value every time.
 */
export function patchByVersionBaseline(collection: string, field: string): Baseline {
  return {
    label: "findOne + updateOne({_id, workspace_id, version})",
    async prepare(context) {
      const records = context.db.collection<Versioned>(collection);
      return async (n) => {
        const filter = { _id: seededId(n, context), workspace_id: context.workspaceId };
        const current = await records.findOne(filter);
        if (!current) throw new Error(`${collection} ${filter._id} is gone`);
        return records.updateOne(
          { ...filter, version: current.version },
          { $set: { [field]: `raw-${n}`, updated_at: new Date() }, $inc: { version: 1 } },
        );
      };
    },
  };
}
