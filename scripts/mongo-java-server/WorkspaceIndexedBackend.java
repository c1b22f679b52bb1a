// mongo-java-server's in-memory backend (`pnpm start --ephemeral`, the tests) with the
// per-workspace `_id` index of WorkspaceIndex.java, so a list walks only its page.

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;
import de.bwaldvogel.mongo.bson.Document;
import java.util.stream.Stream;

public final class WorkspaceIndexedBackend extends MemoryBackend {
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
    private final WorkspaceIndex<Integer> index = new WorkspaceIndex<>();

    Collection(MongoDatabase database, String name, CollectionOptions options, CursorRegistry cursors) {
      super(database, name, options, cursors);
    }

    @Override
    protected Integer addDocumentInternal(Document document) {
      Integer position = super.addDocumentInternal(document);
      index.add(document, position);
      return position;
    }

    @Override
    protected void removeDocument(Integer position) {
      index.remove(getDocument(position));
      super.removeDocument(position);
    }

    @Override
    protected void handleUpdate(Integer position, Document oldDocument, Document newDocument) {
      index.remove(oldDocument);
      index.add(newDocument, position);
      super.handleUpdate(position, oldDocument, newDocument);
    }

    @Override
    protected QueryResult matchDocuments(
        Document query, Document orderBy, int skip, int limit, int batchSize, Document fieldSelector) {
      Stream<Document> walk = index.walk(query, orderBy, this::getDocument);
      if (walk == null) return super.matchDocuments(query, orderBy, skip, limit, batchSize, fieldSelector);
      // Already in the order asked, so no comparator.
      return matchDocumentsFromStream(query, walk, skip, limit, batchSize, null, fieldSelector);
    }
  }
}
