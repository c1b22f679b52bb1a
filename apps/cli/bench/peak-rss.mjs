// Loaded with `node --import` into the measured process: writes its peak RSS (kB) on exit.
import { writeFileSync } from "node:fs";

process.on("exit", () => {
  const file = process.env.DESKLINE_BENCH_RSS_FILE;
  if (file) writeFileSync(file, String(process.resourceUsage().maxRSS));
});
