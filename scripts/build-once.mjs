// `node ../../scripts/build-once.mjs <command…>`, a package's build: runs the command unless the
// package's last build was made from the same files and its `dist` is still as that build left it.
// pnpm install's postinstall builds the SDK, the verifier and the CLI, and `pnpm test` builds every
// package again a minute later from the same files (docs/development.md, "Builds run once per
// change"). Outside a git checkout (a copied tree, a container's build context) it always builds.
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

const root = join(import.meta.dirname, "..");
const pkg = process.cwd();
/** What a package's build reads besides its own files (the spec's types, the shared tsup options, the installed tools). */
const SHARED = ["spec", "packages/tsup.base.ts", "tsconfig.json", "pnpm-lock.yaml", "scripts/build-once.mjs"];
const STAMP = join(pkg, "node_modules/.cache/deskline-build.json");

/** A hash of every file git would commit under the package and SHARED (path and bytes); undefined outside a checkout. */
function inputsHash() {
  let listed;
  try {
    listed = execFileSync(
      "git",
      [
        "ls-files",
        "-z",
        "--cached",
        "--others",
        "--exclude-standard",
        "--",
        pkg,
        ...SHARED.map((p) => join(root, p)),
      ],
      { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], maxBuffer: 64 << 20 },
    );
  } catch {
    return undefined;
  }
  const hash = createHash("sha256");
  for (const file of listed.split("\0").filter(Boolean).sort()) {
    let bytes;
    try {
      bytes = readFileSync(join(root, file));
    } catch {
      continue; // tracked but deleted in this tree
    }
    hash.update(`${file}\0${bytes.length}\0`).update(bytes);
  }
  return hash.digest("hex");
}

/** The build's output as it stands: every file under dist with its size and time. */
function outputHash() {
  const hash = createHash("sha256");
  let entries;
  try {
    entries = readdirSync(join(pkg, "dist"), { recursive: true, withFileTypes: true });
  } catch {
    return "none";
  }
  const files = entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
  for (const file of files.sort()) {
    const { size, mtimeMs } = statSync(file);
    hash.update(`${file}\0${size}\0${mtimeMs}\0`);
  }
  return hash.digest("hex");
}

function readStamp() {
  try {
    return JSON.parse(readFileSync(STAMP, "utf8"));
  } catch {
    return undefined;
  }
}

const [command, ...args] = process.argv.slice(2);
const inputs = inputsHash();
const stamp = readStamp();
if (inputs && stamp?.inputs === inputs && stamp.output === outputHash()) {
  console.log("build: dist is up to date (built from these files)");
  process.exit(0);
}
const built = spawnSync(command, args, { stdio: "inherit", shell: false });
if (built.status !== 0) process.exit(built.status ?? 1);
if (inputs) {
  mkdirSync(dirname(STAMP), { recursive: true });
  writeFileSync(STAMP, JSON.stringify({ inputs, output: outputHash() }));
}
