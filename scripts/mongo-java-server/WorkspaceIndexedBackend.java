// mongo-java-server's in-memory backend (`pnpm start --ephemeral`, the tests) with the
// per-workspace `_id` index of WorkspaceIndex.java, so a list walks only its page, and the delivery
// queue's plans of QueuePlans.java.

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;
import de.bwaldvogel.mongo.bson.Document;
import java.util.Comparator;
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
    /** Built on the first query in Agenda's lock order (QueuePlans.java). */
    private QueuePlans.QueueOrder<Integer> queueOrder;

    Collection(MongoDatabase database, String name, CollectionOptions options, CursorRegistry cursors) {
      super(database, name, options, cursors);
    }

    @Override
    protected Integer addDocumentInternal(Document document) {
      Integer position = super.addDocumentInternal(document);
      index.add(document, position);
      if (queueOrder != null) queueOrder.add(document, position);
      return position;
    }

    @Override
    protected void removeDocument(Integer position) {
      Document document = getDocument(position);
      index.remove(document);
      if (queueOrder != null) queueOrder.remove(document);
      super.removeDocument(position);
    }

    @Override
    protected void handleUpdate(Integer position, Document oldDocument, Document newDocument) {
      index.remove(oldDocument);
      index.add(newDocument, position);
      if (queueOrder != null) {
        queueOrder.remove(oldDocument);
        queueOrder.add(newDocument, position);
      }
      super.handleUpdate(position, oldDocument, newDocument);
    }

    private QueuePlans.QueueOrder<Integer> queueOrder() {
      if (queueOrder == null) queueOrder = QueuePlans.QueueOrder.of(streamAllDocumentsWithPosition());
      return queueOrder;
    }

    @Override
    protected QueryResult matchDocuments(
        Document query, Document orderBy, int skip, int limit, int batchSize, Document fieldSelector) {
      QueuePlans.Plan plan = QueuePlans.plan(query, orderBy, getIndexes(), this::queueOrder, this::getDocument);
      if (plan != null) {
        Comparator<Document> order = plan.ordered() ? null : deriveComparator(orderBy);
        return matchDocumentsFromStream(query, plan.documents(), skip, limit, batchSize, order, fieldSelector);
      }
      Stream<Document> walk = index.walk(query, orderBy, this::getDocument);
      if (walk == null) return super.matchDocuments(query, orderBy, skip, limit, batchSize, fieldSelector);
      // Already in the order asked, so no comparator.
      return matchDocumentsFromStream(query, walk, skip, limit, batchSize, null, fieldSelector);
    }
  }
}
