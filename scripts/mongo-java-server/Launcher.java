// Starts mongo-java-server on a loopback port for the Deskline server's embedded database
// (apps/server/src/platform/database/mongo-java-server.ts), which spawns this as a child process: in memory
// (WorkspaceIndexedBackend.java), or persistent in one H2 file (WorkspaceIndexedH2Backend.java).
//
// Usage: java -cp '<lib>/*:<classes>' Launcher [port] [file]
//   port 0 or absent: a free one; file absent: in memory, else the H2 file to open or create
// Prints "listening <port>" on stdout once it accepts connections. Stops when stdin closes or on
// SIGTERM, so it never outlives the Node process that started it, even one that was killed; both
// go through the shutdown hook, which closes the H2 file after its last commit.
//
// -Ddeskline.clockOffsetMs=N moves the database's clock N ms from the host's (negative: back): the
// time `hello` and serverStatus say (what the Deskline server decides leases, due times and rate
// limits by) and the oplog's timestamps. `$currentDate` keeps the host's time in mongo-java-server
// 1.47; the Deskline server does not use it. The Node side passes the offset of the
// process that starts it, so a process whose clock a test moved
// (apps/server/test/helpers/shifted-date.mjs: the whole suite on a later date) gets a database on
// the same date, as a host's mongod would be.
//
// -Ddeskline.oplog=true turns on mongo-java-server's oplog, which gives it change streams: for a
// test of the change-stream path only (apps/server/test/delivery-wake.test.ts). Never by default:
// that oplog is a collection that grows without bound and is scanned on every getMore. The
// backends add findAndModify's changes to it, which the library leaves out (FindAndModifyOplog.java).

import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.MongoServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;

public final class Launcher {
  public static void main(String[] args) throws IOException {
    int port = args.length > 0 ? Integer.parseInt(args[0]) : 0;
    Clock clock = Clock.offset(Clock.systemUTC(), Duration.ofMillis(Long.getLong("deskline.clockOffsetMs", 0L)));
    MongoBackend backend =
        args.length > 1 ? new WorkspaceIndexedH2Backend(args[1], clock) : new WorkspaceIndexedBackend(clock);
    if (Boolean.getBoolean("deskline.oplog")) backend.enableOplog();
    MongoServer server = new MongoServer(backend);
    server.bind(new InetSocketAddress("127.0.0.1", port));
    Runtime.getRuntime().addShutdownHook(new Thread(server::shutdownNow));
    System.out.println("listening " + server.getLocalAddress().getPort());
    System.out.flush();

    InputStream stdin = System.in;
    while (stdin.read() != -1) {
      // Nothing is sent on stdin; it only tells us when the parent has gone.
    }
    System.exit(0);
  }
}
