// Where a listener starts: where the last one stopped (its saved cursor), or `--since` a point in
// time or an event, or, the first time, now.
import type { Deskline } from "@deskline/sdk";
import { UsageError } from "../errors.js";
import { rfc3339 as iso, secondsOf } from "../when.js";
import { type Cursor, cursorFrom, markHandled } from "./cursor.js";

export interface Start {
  cursor: Cursor;
  /** For the banner: where forwarding starts, in words. */
  description: string;
}

/** After the event `id`: ids sort by creation, so its second's ids up to its own are handled. */
async function afterEvent(deskline: Deskline, id: string): Promise<Cursor> {
  const { created } = await deskline.events.get(id);
  let cursor = cursorFrom(created);
  const sameSecond = deskline.events.list({
    created_after: String(created - 1),
    created_before: String(created + 1),
    limit: 100,
  });
  for await (const event of sameSecond) if (event.id <= id) cursor = markHandled(cursor, event);
  return cursor;
}

/**
 * The second this process started in, on the clock `Date` reads: `performance.timeOrigin` is the
 * same moment, but read once from the system, so a process whose `Date` was moved (a test run on
 * a later date) would start that far before the events it compares this with.
 */
const startedAt = () => Math.floor((Date.now() - performance.now()) / 1000);

export async function startingPoint(
  deskline: Deskline,
  since: string | undefined,
  saved: Cursor | undefined,
  now = startedAt(),
): Promise<Start> {
  if (since === undefined && saved) {
    return { cursor: saved, description: `resuming where the last run stopped (${iso(saved.newest)})` };
  }
  if (since === undefined || since === "now") {
    // From the second the listener started in: an event of that second from just before the
    // start is forwarded too, rather than one from just after it missed (`created` is seconds).
    return { cursor: cursorFrom(now), description: "from now on" };
  }
  if (since.startsWith("evt_"))
    return { cursor: await afterEvent(deskline, since), description: `after ${since}` };
  const seconds = secondsOf(since);
  if (seconds === undefined) {
    throw new UsageError(
      `--since '${since}': give now, an event id (evt_…), Unix seconds or an RFC 3339 time`,
    );
  }
  return { cursor: cursorFrom(seconds), description: `since ${iso(seconds)}` };
}
