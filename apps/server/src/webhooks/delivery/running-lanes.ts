/**
 * The lanes running in this process, so that a delivery queued here for an endpoint whose lane
 * runs here reaches that lane directly, with no Agenda save, lock or new run (docs/decisions.md,
 * "A lane lingers"). A lane whose batch came up short waits a moment for such news before it ends:
 * under a steady stream of events one run sends them all, where each event used to cost a run.
 * Deliveries queued by another process are found by a read every `checkEveryMs` meanwhile.
 */

export interface LingerOptions {
  /** The longest a lane waits for more work after a short batch. */
  maxMs: number;
  /** How often a waiting lane reads whether a delivery queued elsewhere has come due. */
  checkEveryMs: number;
  /** The read: is a delivery of this endpoint due now? */
  due: () => Promise<boolean>;
}

class RunningLane {
  private news = false;
  private stopped = false;
  private wake: (() => void) | undefined;

  constructor(
    readonly endpointId: string,
    readonly finished: Promise<void>,
  ) {}

  /** A delivery was queued for this lane's endpoint. */
  notify(): void {
    this.news = true;
    this.wake?.();
  }

  /**
   * Waits for work until `until` (epoch ms) at the latest: true as soon as a delivery is queued
   * here or the read finds one due; false when the time is up with none.
   */
  async linger(until: number, options: LingerOptions): Promise<boolean> {
    const end = Math.min(until, Date.now() + options.maxMs);
    for (let left = end - Date.now(); left > 0 && !this.stopped; left = end - Date.now()) {
      if (await this.heard(Math.min(options.checkEveryMs, left))) return true;
      if (await options.due()) return true;
    }
    return this.heard(0);
  }

  /** Ends a wait at once, and every later one (the process is stopping). */
  interrupt(): void {
    this.stopped = true;
    this.wake?.();
  }

  /** True when news came, now or within `ms`. */
  private async heard(ms: number): Promise<boolean> {
    if (!this.news && ms > 0) {
      await new Promise<void>((done) => {
        const timer = setTimeout(done, ms);
        this.wake = () => {
          clearTimeout(timer);
          done();
        };
      });
      this.wake = undefined;
    }
    const heard = this.news;
    this.news = false;
    return heard;
  }
}

export class RunningLanes {
  private readonly lanes = new Map<string, RunningLane>();

  get size(): number {
    return this.lanes.size;
  }

  /** The endpoints whose lanes run here. */
  ids(): IterableIterator<string> {
    return this.lanes.keys();
  }

  /**
   * Runs `run` as the endpoint's lane in this process: news of deliveries queued here reaches it
   * until it ends. A lane runs only under its lease (webhooks/endpoints/lanes.ts), so there is
   * at most one.
   */
  async run<T>(endpointId: string, run: (lane: RunningLane) => Promise<T>): Promise<T> {
    let finish = () => {};
    const lane = new RunningLane(
      endpointId,
      new Promise<void>((done) => {
        finish = done;
      }),
    );
    this.lanes.set(endpointId, lane);
    try {
      return await run(lane);
    } finally {
      if (this.lanes.get(endpointId) === lane) this.lanes.delete(endpointId);
      finish();
    }
  }

  /**
   * Tells the lanes running here of their new deliveries; returns the endpoints whose lane does
   * not run here (the dispatcher's to find). A lane told after its last look at the queue has its
   * work found by the round its end asks for (webhooks/delivery/dispatcher.ts).
   */
  notify<T>(due: Map<string, T>): Map<string, T> {
    const elsewhere = new Map<string, T>();
    for (const [endpointId, at] of due) {
      const lane = this.lanes.get(endpointId);
      if (lane) lane.notify();
      else elsewhere.set(endpointId, at);
    }
    return elsewhere;
  }

  /** Ends every wait (the process is stopping); resolves when every lane running now has ended. */
  drain(): Promise<void> {
    const lanes = [...this.lanes.values()];
    for (const lane of lanes) lane.interrupt();
    return Promise.all(lanes.map((lane) => lane.finished)).then(() => {});
  }
}

export type { RunningLane };
