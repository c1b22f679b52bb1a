// Starts mongo-java-server (its in-memory backend, plus the index WorkspaceIndexedBackend.java adds)
// on a loopback port for the Deskline server's embedded database (apps/server/src/db/embedded.ts),
// which spawns this as a child process.
//
// Usage: java -cp '<lib>/*:<classes>' Launcher [port]   (port 0 or absent: a free one)
// Prints "listening <port>" on stdout once it accepts connections. Stops when stdin closes or on
// SIGTERM, so it never outlives the Node process that started it, even one that was killed.

import de.bwaldvogel.mongo.MongoServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;

public final class Launcher {
  public static void main(String[] args) throws IOException {
    int port = args.length > 0 ? Integer.parseInt(args[0]) : 0;
    MongoServer server = new MongoServer(new WorkspaceIndexedBackend());
    server.bind(new InetSocketAddress("127.0.0.1", port));
    Runtime.getRuntime().addShutdownHook(new Thread(server::shutdownNow));
    System.out.println("listening " + server.getLocalAddress().getPort());
    System.out.flush();

    InputStream stdin = System.in;
    while (stdin.read() != -1) {
      // Nothing is sent on stdin; it only tells us when the parent has gone.
    }
    server.shutdownNow();
    System.exit(0);
  }
}
