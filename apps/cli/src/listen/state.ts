// What `deskline listen` keeps between runs, in the user's state directory: the local signing
// secret and Ed25519 key pair (stable, so a receiver configured once keeps verifying, and
// `--print-secret` can hand the secret or public key to a script before the listener starts) and, per forwarding target, the cursor, so a
// restarted listener resumes where it stopped instead of missing what happened meanwhile.
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { generateSigningKeyPair, type SigningKeyPair } from "@deskline/webhook-verifier";
import { writePrivateFile } from "../config.js";
import { terminal } from "../terminal.js";
import { type Cursor, parseCursor } from "./cursor.js";

/** `$XDG_STATE_HOME/deskline/listen` (else `~/.local/state/deskline/listen`). */
export function stateDir(env: NodeJS.ProcessEnv = terminal().env): string {
  const base = env.XDG_STATE_HOME || join(env.HOME || homedir(), ".local", "state");
  return join(base, "deskline", "listen");
}

const digest = (...parts: string[]) =>
  createHash("sha256").update(parts.join("\n")).digest("hex").slice(0, 16);

/**
 * The state of one (server, API key): its files are named by a hash of both, so the key never
 * appears in a file name and two workspaces never share a secret or a cursor.
 */
export class ListenState {
  private readonly dir: string;

  constructor(baseUrl: string, apiKey: string, env: NodeJS.ProcessEnv = terminal().env) {
    this.dir = join(stateDir(env), digest(baseUrl, apiKey));
  }

  /** The local signing secret, made (`whsec_` + 32 random bytes, as the server's) on first use. */
  secret(): string {
    const path = join(this.dir, "secret.json");
    const stored = readJson(path) as { secret?: unknown } | undefined;
    if (typeof stored?.secret === "string" && stored.secret.startsWith("whsec_")) return stored.secret;
    const secret = `whsec_${randomBytes(32).toString("base64")}`;
    writePrivateFile(path, `${JSON.stringify({ secret, created_at: new Date().toISOString() })}\n`);
    return secret;
  }

  /** The local Ed25519 key pair (`--signing ed25519`), made on first use like the secret. */
  keyPair(): SigningKeyPair {
    const path = join(this.dir, "ed25519.json");
    const stored = readJson(path) as Partial<SigningKeyPair> | undefined;
    if (stored?.secretKey?.startsWith("whsk_") && stored.publicKey?.startsWith("whpk_")) {
      return { secretKey: stored.secretKey, publicKey: stored.publicKey };
    }
    const pair = generateSigningKeyPair();
    writePrivateFile(path, `${JSON.stringify({ ...pair, created_at: new Date().toISOString() })}\n`);
    return pair;
  }

  /** Where the cursor of forwarding to `forwardTo` lives (`--state` replaces it). */
  cursorPath(forwardTo: string): string {
    return join(this.dir, `cursor-${digest(forwardTo)}.json`);
  }
}

/** The cursor stored at `path`, or undefined when there is none (or it is unreadable). */
export function loadCursor(path: string): Cursor | undefined {
  return parseCursor((readJson(path) as { cursor?: unknown } | undefined)?.cursor);
}

export function saveCursor(path: string, forwardTo: string, cursor: Cursor): void {
  writePrivateFile(path, `${JSON.stringify({ forward_to: forwardTo, cursor })}\n`);
}

function readJson(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  try {
    return JSON.parse(text);
  } catch {
    // A file cut short by a disk that filled up: start afresh rather than refuse to run.
    return undefined;
  }
}
