import { mkdirSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { join } from "node:path";

/**
 * BENCH_CPU_PROFILE=<dir>: a V8 CPU profile of this process for each measured window, written as
 * `<dir>/<label>.cpuprofile` (open it in Chrome DevTools or speedscope). Profiling only the
 * window keeps seeding, start-up and the other side's runs out of the picture, which a whole-run
 * `node --cpu-prof` mixes in. Unset: runs `work` unprofiled.
 */
export async function profiled<T>(label: string, work: () => Promise<T>): Promise<T> {
  const dir = process.env.BENCH_CPU_PROFILE;
  if (!dir) return work();
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
  try {
    return await work();
  } finally {
    const { profile } = await session.post("Profiler.stop");
    session.disconnect();
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${label.replace(/[^\w.-]+/g, "_")}.cpuprofile`), JSON.stringify(profile));
  }
}
