// mongo-java-server's in-memory backend (`pnpm start --ephemeral`, the tests) with the
// indexes of CollectionIndexes.java: a list walks only its page, the delivery queue's queries
// read only the jobs they need.

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.DatabaseResolver;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.oplog.Oplog;
import io.netty.channel.Channel;
import java.util.Comparator;

public final class WorkspaceIndexedBackend extends MemoryBackend {
  @Override
  public MemoryDatabase openOrCreateDatabase(String databaseName) {
    return new MemoryDatabase(databaseName, getCursorRegistry()) {
      // A findAndModify's changes go to the oplog too, when it is on (FindAndModifyOplog.java).
      @Override
      public Document handleCommand(
          Channel channel, String command, Document query, DatabaseResolver resolver, Oplog oplog) {
        return FindAndModifyOplog.handle(
            this, command, query, oplog, () -> super.handleCommand(channel, command, query, resolver, oplog));
      }

      @Override
      protected MemoryCollection openOrCreateCollection(String collectionName, CollectionOptions options) {
        return new Collection(this, collectionName, options, cursorRegistry);
      }
    };
  }

  static final class Collection extends MemoryCollection {
    private final CollectionIndexes<Integer> indexes =
        new CollectionIndexes<>(this::streamAllDocumentsWithPosition, this::getDocument);

    Collection(MongoDatabase database, String name, CollectionOptions options, CursorRegistry cursors) {
      super(database, name, options, cursors);
    }

    @Override
    protected Integer addDocumentInternal(Document document) {
      return indexes.add(document, () -> super.addDocumentInternal(document));
    }

    @Override
    protected void removeDocument(Integer position) {
      indexes.remove(getDocument(position));
      super.removeDocument(position);
    }

    @Override
    protected void handleUpdate(Integer position, Document oldDocument, Document newDocument) {
      indexes.update(oldDocument, newDocument, position);
      super.handleUpdate(position, oldDocument, newDocument);
      FindAndModifyOplog.updated(this, newDocument.get("_id"));
    }

    // The public add and remove, called once a document is in (or out of) the collection and
    // its indexes: what a findAndModify did, for the oplog (FindAndModifyOplog.java).
    @Override
    public void addDocument(Document document) {
      super.addDocument(document);
      FindAndModifyOplog.inserted(this, document);
    }

    @Override
    public void removeDocument(Document document) {
      super.removeDocument(document);
      FindAndModifyOplog.deleted(this, document.get("_id"));
    }

    @Override
    protected QueryResult matchDocuments(
        Document query, Document orderBy, int skip, int limit, int batchSize, Document fieldSelector) {
      QueuePlans.Plan plan = indexes.plan(query, orderBy, getIndexes());
      if (plan == null) return super.matchDocuments(query, orderBy, skip, limit, batchSize, fieldSelector);
      // A plan in the order asked needs no comparator.
      Comparator<Document> order = plan.ordered() ? null : deriveComparator(orderBy);
      return matchDocumentsFromStream(query, plan.documents(), skip, limit, batchSize, order, fieldSelector);
    }
  }
}
