#!/usr/bin/env node
// The `deskline` executable: run the command line, let stdout drain, exit with its code.
import { run } from "./index.js";

// A reader that stops early (`| head`) is not an error of ours.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});

const code = await run(process.argv.slice(2));
// Exit explicitly (idle keep-alive connections would hold the process open), once what was
// written to stdout has been flushed to the pipe.
process.stdout.write("", () => process.exit(code));
