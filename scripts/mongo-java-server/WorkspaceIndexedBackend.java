// mongo-java-server's in-memory backend (`pnpm start --ephemeral`, the tests) with the
// indexes of CollectionIndexes.java: a list walks only its page, the delivery queue's queries
// read only the jobs they need. Its collection's hooks hand over to CollectionHooks.java.

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;
import de.bwaldvogel.mongo.bson.Document;
import io.netty.channel.Channel;
import java.time.Clock;

public final class WorkspaceIndexedBackend extends MemoryBackend {
  /** `clock`: the time it says (`hello`'s localTime) and its oplog stamps; Launcher.java may move it. */
  public WorkspaceIndexedBackend(Clock clock) {
    super(clock);
  }

  // A findAndModify's changes go to the oplog too, when it is on (FindAndModifyOplog.java).
  @Override
  public Document handleCommand(Channel channel, String databaseName, String command, Document query) {
    return FindAndModifyOplog.handle(
        databaseName, command, query, oplog, () -> super.handleCommand(channel, databaseName, command, query));
  }

  @Override
  public MemoryDatabase openOrCreateDatabase(String databaseName) {
    return new MemoryDatabase(databaseName, getCursorRegistry()) {
      @Override
      protected MemoryCollection openOrCreateCollection(String collectionName, CollectionOptions options) {
        return new Collection(this, collectionName, options, cursorRegistry);
      }
    };
  }

  static final class Collection extends MemoryCollection {
    private final CollectionHooks<Integer> hooks =
        new CollectionHooks<>(this, this::streamAllDocumentsWithPosition, this::getDocument);

    Collection(MongoDatabase database, String name, CollectionOptions options, CursorRegistry cursors) {
      super(database, name, options, cursors);
    }

    @Override
    protected Integer addDocumentInternal(Document document) {
      return hooks.insert(document, () -> super.addDocumentInternal(document));
    }

    @Override
    protected void removeDocument(Integer position) {
      hooks.remove(position, () -> super.removeDocument(position));
    }

    @Override
    protected void handleUpdate(Integer position, Document oldDocument, Document newDocument) {
      hooks.update(position, oldDocument, newDocument, () -> super.handleUpdate(position, oldDocument, newDocument));
    }

    @Override
    public void addDocument(Document document) {
      super.addDocument(document);
      hooks.added(document);
    }

    @Override
    public void removeDocument(Document document) {
      super.removeDocument(document);
      hooks.removed(document);
    }

    @Override
    protected QueryResult matchDocuments(
        Document query, Document orderBy, int skip, int limit, int batchSize, Document fieldSelector) {
      return hooks.match(query, orderBy, getIndexes(), Collection::deriveComparator,
          (documents, order) -> matchDocumentsFromStream(query, documents, skip, limit, batchSize, order, fieldSelector),
          () -> super.matchDocuments(query, orderBy, skip, limit, batchSize, fieldSelector));
    }
  }
}
