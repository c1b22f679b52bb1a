// The recovery's progress bar (src/progress.ts) as a terminal shows it: the share of the window
// looked at, events read and deliveries queued; nothing at all when stderr is not a terminal.
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { startRecoveryProgress } from "../src/progress.js";

const terminal = () => {
  const stream = Object.assign(new PassThrough(), {
    isTTY: true,
    columns: 120,
    cursorTo: () => true,
    clearLine: () => true,
    moveCursor: () => true,
  });
  let text = "";
  stream.on("data", (chunk: Buffer) => {
    text += chunk.toString();
  });
  return { stream: stream as unknown as NodeJS.WriteStream, text: () => text };
};

const window = { since: "2026-03-01T00:00:00.000Z", until: "2026-03-02T00:00:00.000Z" };

describe("the recovery progress bar", () => {
  it("shows how far through the window the recovery is, with its counts", async () => {
    const { stream, text } = terminal();
    const bar = startRecoveryProgress(stream);
    bar.update({ ...window, scanned: 1200, scanned_until: "2026-03-01T12:00:00.000Z", queued: 40 });
    await new Promise((done) => setTimeout(done, 300)); // the bar redraws at 5 fps
    expect(text()).toMatch(/50% of the window \| 1200 events read \| 40 deliveries queued/);
    bar.stop();
  });

  it("draws nothing where stderr is not a terminal", () => {
    const stream = Object.assign(new PassThrough(), { isTTY: false });
    let written = "";
    stream.on("data", (chunk: Buffer) => {
      written += chunk.toString();
    });
    const bar = startRecoveryProgress(stream as unknown as NodeJS.WriteStream);
    bar.update({ ...window, scanned: 1, scanned_until: null, queued: 0 });
    bar.stop();
    expect(written).toBe("");
  });
});
