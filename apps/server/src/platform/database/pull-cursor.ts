/**
 * The position of an incremental pull (spec: *Incremental pull*): records come ordered by
 * (`updated_at`, `id`), and a page continues strictly after the position of the previous page's
 * last item. The cursor clients carry is that position, opaque (base64url), so its form can change
 * within v1.
 */

export interface PullPosition {
  /** Items changed strictly after this instant (or at it, with a greater id). */
  updatedAt: Date;
  /** Set when the position is an item: at `updatedAt`, only ids after this one. */
  id?: string;
}

const VERSION = "1";

export function encodeCursor(position: PullPosition): string {
  const text = `${VERSION}.${position.updatedAt.getTime()}.${position.id ?? ""}`;
  return Buffer.from(text, "utf8").toString("base64url");
}

/** The position a cursor encodes, or undefined when it is not one of ours. */
export function decodeCursor(cursor: string): PullPosition | undefined {
  const match = /^1\.(\d{1,15})\.((?:[a-z]+_[0-9A-Za-z]+)?)$/.exec(
    Buffer.from(cursor, "base64url").toString(),
  );
  if (!match) return undefined;
  const updatedAt = new Date(Number(match[1]));
  if (Number.isNaN(updatedAt.getTime())) return undefined;
  return match[2] ? { updatedAt, id: match[2] } : { updatedAt };
}
