import { connect, createServer, type Server, type Socket } from "node:net";
import { Transform } from "node:stream";

/**
 * A loopback TCP proxy in front of the run's database, so a test can make the database vanish
 * (refused connections, dropped sockets) and come back on the same address, or its answers slow,
 * without touching the database itself or what is stored in it.
 */
export interface TcpProxy {
  /** The database's URI rewritten to go through the proxy. */
  uri: string;
  port: number;
  /** Accepts and forwards connections (again). */
  open(): Promise<void>;
  /** Refuses new connections and cuts the open ones, as a database that went down would. */
  cut(): Promise<void>;
  /** Holds each of the database's answers `ms` before passing it on (0: at once), as a slow way back would. */
  delayAnswers(ms: number): void;
}

/** `mongodb://[auth@]host:port[,more]/rest`: the first host is the target. */
function splitUri(uri: string): { auth: string; host: string; port: number; rest: string } {
  const match = /^mongodb:\/\/([^@/]*@)?([^:/,?]+):(\d+)[^/?]*(.*)$/.exec(uri);
  if (!match?.[2] || !match[3]) throw new Error(`cannot proxy ${uri}: a mongodb://host:port URI is needed`);
  return { auth: match[1] ?? "", host: match[2], port: Number(match[3]), rest: match[4] ?? "" };
}

/** A proxy to `databaseUri` on a free loopback port; closed until `open()`. */
export async function createTcpProxy(databaseUri: string): Promise<TcpProxy> {
  const target = splitUri(databaseUri);
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  const port = await new Promise<number>((done) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => done(typeof address === "object" && address ? address.port : 0));
    });
  });
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  };
  let answerDelayMs = 0;
  // In order: the next chunk waits for the one before it.
  const answers = () =>
    new Transform({
      transform(chunk, _encoding, done) {
        if (answerDelayMs === 0) done(null, chunk);
        else setTimeout(() => done(null, chunk), answerDelayMs);
      },
    });
  const rest = target.rest.startsWith("/") ? target.rest : `/${target.rest}`;
  const separator = rest.includes("?") ? "&" : "?";
  return {
    // Direct: a replica set would otherwise hand the driver its members' real addresses.
    uri: `mongodb://${target.auth}127.0.0.1:${port}${rest}${separator}directConnection=true`,
    port,
    async open() {
      if (server) return;
      const listening = createServer((client) => {
        const upstream = connect(target.port, target.host);
        track(client);
        track(upstream);
        client.pipe(upstream).pipe(answers()).pipe(client);
        client.once("error", () => upstream.destroy());
        upstream.once("error", () => client.destroy());
      });
      await new Promise<void>((done, fail) =>
        listening.once("error", fail).listen(port, "127.0.0.1", () => done()),
      );
      server = listening;
    },
    async cut() {
      const closing = server;
      server = undefined;
      for (const socket of sockets) socket.destroy();
      if (closing) await new Promise<void>((done) => closing.close(() => done()));
    },
    delayAnswers(ms) {
      answerDelayMs = ms;
    },
  };
}
