import {
  benchWorkspace,
  type certificate,
  childPid,
  cpuMs,
  post,
  type receiver,
  startServer,
} from "./delivery-kit.js";
import { newRunId } from "./environment.js";

/** A receiver (delivery-kit.ts): where endpoints point and when each delivery arrived. */
export type Receiver = Awaited<ReturnType<typeof receiver>>;

/**
 * What every delivery scenario works with: the one database server of the run, the certificate
 * the receivers serve and the servers trust, and the receiver most endpoints point at.
 */
export interface Bench {
  database: { uri: string };
  tls: ReturnType<typeof certificate>;
  target: Receiver;
}

/** One API write: when it was sent and answered, and the contact its event carries. */
export type Written = { contactId: string; started: number; answered: number };
/** CPU ms used so far by each process of a deployment, by role (and by the embedded database). */
export type Cpu = () => { role: string; ms: number }[];
export type Deployment = Awaited<ReturnType<typeof deployment>>;

/**
 * Server processes (src/main.ts) on a database of their own; the first one serves the API.
 * `write` writes in a workspace whose one endpoint is the bench's receiver; `writer` makes
 * another workspace, with an endpoint at `url` or none.
 */
export async function deployment(
  { database, tls, target }: Bench,
  roles: Array<"all" | "api" | "worker">,
  env: Record<string, string> = {},
) {
  const databaseName = `bench_delivery_${roles.join("_")}_${newRunId()}`;
  const processes = roles.map((role) => startServer(database.uri, databaseName, role, tls.certFile, env));
  const baseUrl = (await processes[0]?.baseUrl) as string;
  await Promise.all(processes.filter((p) => p.role !== "api").map((p) => p.delivering));
  const writer = (url: string | null, endpoint: Record<string, unknown> = {}) =>
    workspaceWriter(baseUrl, url, endpoint);
  const write = await writer(target.url);
  /** Starts one more process on the same database (a worker joining later). */
  const join = async (role: "worker") => {
    const joined = startServer(database.uri, databaseName, role, tls.certFile, env);
    processes.push(joined);
    await joined.delivering;
    return joined.child.pid;
  };
  const stop = async () => {
    for (const p of processes) p.child.kill("SIGTERM");
    await Promise.all(processes.map((p) => p.exited));
  };
  // The embedded database (when the bench started one) serves these processes alone meanwhile.
  const databasePid = childPid("java");
  const cpu: Cpu = () => [
    ...processes.map((p) => ({ role: p.role, ms: cpuMs(p.child.pid) })),
    ...(databasePid ? [{ role: "database", ms: cpuMs(databasePid) }] : []),
  ];
  return { baseUrl, write, writer, join, stop, cpu };
}

/**
 * A new workspace at `baseUrl`, subscribed to `contact.created` at `url` (with the endpoint's
 * further settings in `endpoint`, e.g. a rate_limit) or not at all; its write.
 */
async function workspaceWriter(baseUrl: string, url: string | null, endpoint: Record<string, unknown>) {
  const { auth } = await benchWorkspace(baseUrl);
  if (url)
    await post(
      `${baseUrl}/open/v1/webhook-endpoints`,
      { url, events: ["contact.created"], ...endpoint },
      auth,
    );
  /** One API write (create contact); its event id is found by the contact id it carries. */
  return async (): Promise<Written> => {
    const started = performance.now();
    const contact = await post(`${baseUrl}/open/v1/contacts`, { name: "Bench" }, auth);
    return { contactId: contact.id as string, started, answered: performance.now() };
  };
}
