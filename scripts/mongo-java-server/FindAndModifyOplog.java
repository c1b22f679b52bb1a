// Gives findAndModify (the driver's findOneAndUpdate/Replace/Delete) entries in mongo-java-server's
// opt-in oplog, so a change stream hears of it as it does of insert, update and delete: 1.47 logs
// only those three commands. Agenda saves a unique job with a findOneAndUpdate upsert, and the
// change-stream test of waking workers (apps/server/test/delivery-wake.test.ts) needs to hear of
// that save; see "Waking workers" in docs/decisions.md. Without the oplog nothing here runs.
//
// Both backends route their commands through handle(); during a findAndModify
// their collections report each document it changed (recorded per thread: a command runs on one
// thread from start to end), and once it has succeeded the changes go to the oplog as the library
// logs the other commands: an insert with the document, an update or a delete with the _id.

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.oplog.NoopOplog;
import de.bwaldvogel.mongo.oplog.Oplog;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

final class FindAndModifyOplog {
  private enum Kind { INSERT, UPDATE, DELETE }

  /** For an insert, the document as inserted; otherwise only its _id is needed. */
  private record Change(Kind kind, String namespace, Document document, Object id) {}

  /** The changes of the findAndModify running on this thread, if one is (and the oplog is on). */
  private static final ThreadLocal<List<Change>> recording = new ThreadLocal<>();

  private FindAndModifyOplog() {}

  /** Runs a command (`command`) of a database, logging what a findAndModify changed when the oplog is on. */
  static Document handle(String databaseName, String command, Document query, Oplog oplog, Supplier<Document> run) {
    if (oplog instanceof NoopOplog || !command.equalsIgnoreCase("findAndModify")) return run.get();
    // Only the command's collection: creating it on the way also writes to system collections.
    String namespace = databaseName + "." + query.get(command);
    List<Change> changes = new ArrayList<>();
    recording.set(changes);
    Document response;
    try {
      response = run.get();
    } finally {
      // Ended before logging: the oplog's own collection reports its inserts here too.
      recording.remove();
    }
    Document selector = query.get("query") instanceof Document d ? d : new Document();
    // The update's operators are what a stream without updateLookup shows of an update.
    Document update = query.get("update") instanceof Document d ? d : new Document();
    for (Change change : changes) {
      if (!change.namespace().equals(namespace)) continue;
      switch (change.kind()) {
        case INSERT -> oplog.handleInsert(namespace, List.of(change.document()));
        case UPDATE -> oplog.handleUpdate(namespace, selector, update, List.of(change.id()));
        case DELETE -> oplog.handleDelete(namespace, selector, List.of(change.id()));
      }
    }
    return response;
  }

  /** A collection added `document` (an upsert's new document). */
  static void inserted(MongoCollection<?> collection, Document document) {
    // Copied only while recording: without the oplog, an insert costs one ThreadLocal read more.
    if (recording.get() != null) record(Kind.INSERT, collection, document.cloneDeeply(), null);
  }

  /** A collection changed the document with this _id (an update that changed nothing is not reported). */
  static void updated(MongoCollection<?> collection, Object id) {
    record(Kind.UPDATE, collection, null, id);
  }

  /** A collection removed the document with this _id. */
  static void deleted(MongoCollection<?> collection, Object id) {
    record(Kind.DELETE, collection, null, id);
  }

  private static void record(Kind kind, MongoCollection<?> collection, Document document, Object id) {
    List<Change> changes = recording.get();
    if (changes != null) changes.add(new Change(kind, collection.getFullName(), document, id));
  }
}
