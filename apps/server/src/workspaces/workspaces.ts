import type { Collection, Db } from "mongodb";
import { newId } from "../platform/ids.js";

export interface WorkspaceDoc {
  _id: string;
  name: string;
  created_at: Date;
}

export function toWorkspace(doc: WorkspaceDoc) {
  return {
    id: doc._id,
    object: "workspace" as const,
    name: doc.name,
    created_at: doc.created_at.toISOString(),
  };
}

export class Workspaces {
  private readonly collection: Collection<WorkspaceDoc>;
  constructor(db: Db) {
    this.collection = db.collection<WorkspaceDoc>("workspaces");
  }

  async ensureIndexes(): Promise<void> {}

  async create(name: string): Promise<WorkspaceDoc> {
    const doc: WorkspaceDoc = { _id: newId("ws"), name, created_at: new Date() };
    await this.collection.insertOne(doc);
    return doc;
  }

  async exists(id: string): Promise<boolean> {
    return (await this.collection.findOne({ _id: id }, { projection: { _id: 1 } })) !== null;
  }
}
