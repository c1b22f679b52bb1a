// mongo-java-server's persistent backend (`pnpm start`'s data under .deskline/data when no mongod
// can be had): H2's MVStore, one file, with the per-workspace `_id` index of WorkspaceIndex.java.
// That index lives in memory and is rebuilt from the documents on a collection's first query or
// write after the file opens (one pass over that collection); the unique indexes are the
// library's own, kept in the file.
//
// MVStore commits in the background about once a second and on close (the launcher closes it on
// stdin's end and on SIGTERM), so a clean stop keeps everything and a SIGKILL can lose the last
// second of writes. It locks its file: a second process on the same file fails to start.

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.EmptyIndex;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.backend.h2.H2Collection;
import de.bwaldvogel.mongo.backend.h2.H2Database;
import de.bwaldvogel.mongo.bson.Document;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;

public final class WorkspaceIndexedH2Backend extends H2Backend {
  // The map names H2Database gives a collection's documents and metadata (package-private and
  // private there); the restart test (apps/server/test/persistence.test.ts) fails if they drift.
  private static final String DATA_PREFIX = "databases.";
  private static final String META_PREFIX = "meta.";

  // MVStore keeps this much of the file's pages, documents deserialized, in memory (its default is
  // 16 MB). Most queries on this backend scan their collection; with a collection larger than the
  // cache, every scan would read and deserialize it from the file again.
  private static final int CACHE_MB = 256;

  /** Opens (or creates) the file; the databases already in it are opened here, through the override below. */
  public WorkspaceIndexedH2Backend(String fileName) {
    super(new MVStore.Builder().fileName(fileName).cacheSize(CACHE_MB).open());
  }

  // Called from H2Backend's constructor too, for the databases found in the file: it uses only
  // what that constructor has already set (the store, the cursor registry), no field of this class.
  @Override
  protected MongoDatabase openOrCreateDatabase(String databaseName) {
    MVStore store = getMvStore();
    return new H2Database(databaseName, store, getCursorRegistry()) {
      // Runs within H2Database's constructor as well (it reopens its collections); `store` is a
      // captured local, set before that constructor runs.
      @Override
      protected MongoCollection<Object> openOrCreateCollection(String collectionName, CollectionOptions options) {
        String name = getFullCollectionNamespace(collectionName);
        return new Collection(
            this, collectionName, options, documents(store, DATA_PREFIX + name), store.openMap(META_PREFIX + name), cursorRegistry);
      }

      // The library keeps no non-unique index (it answers such queries by scanning), but adding
      // its stand-in to a collection whose index "is empty" walks every document twice to fill
      // it with nothing: for each such index, at each opening of the file, 9 s for 10,000
      // contacts on a busy machine. This stand-in claims to be filled, so nothing is walked.
      @Override
      protected Index<Object> openOrCreateSecondaryIndex(
          String collectionName, String indexName, List<IndexKey> keys, boolean sparse) {
        return new EmptyIndex<>(indexName, keys) {
          @Override
          public boolean isEmpty() {
            return false;
          }
        };
      }
    };
  }

  /** A collection's documents, stored as BSON (BsonDocumentType.java). */
  private static MVMap<Object, Document> documents(MVStore store, String name) {
    return store.openMap(name, new MVMap.Builder<Object, Document>().valueType(BsonDocumentType.INSTANCE));
  }

  static final class Collection extends H2Collection {
    /** Built from the file on first use, so opening a large file does not wait for it. */
    private WorkspaceIndex<Object> index;
    /** Built on the first query in Agenda's lock order (QueuePlans.java). */
    private QueuePlans.QueueOrder<Object> queueOrder;

    Collection(
        MongoDatabase database,
        String name,
        CollectionOptions options,
        MVMap<Object, Document> documents,
        MVMap<String, Object> meta,
        CursorRegistry cursors) {
      super(database, name, options, documents, meta, cursors);
    }

    // Every caller holds the collection's lock (see WorkspaceIndex.java), so one builds it.
    private WorkspaceIndex<Object> index() {
      if (index == null) {
        WorkspaceIndex<Object> built = new WorkspaceIndex<>();
        streamAllDocumentsWithPosition().forEach(entry -> built.add(entry.getDocument(), entry.getPosition()));
        index = built;
      }
      return index;
    }

    @Override
    protected Object addDocumentInternal(Document document) {
      // Built first: a build after the insert would find the new document and count it twice.
      WorkspaceIndex<Object> index = index();
      Object position = super.addDocumentInternal(document);
      index.add(document, position);
      if (queueOrder != null) queueOrder.add(document, position);
      return position;
    }

    @Override
    protected void removeDocument(Object position) {
      Document document = getDocument(position);
      index().remove(document);
      if (queueOrder != null) queueOrder.remove(document);
      super.removeDocument(position);
    }

    @Override
    protected void handleUpdate(Object position, Document oldDocument, Document newDocument) {
      index().remove(oldDocument);
      index().add(newDocument, position);
      if (queueOrder != null) {
        queueOrder.remove(oldDocument);
        queueOrder.add(newDocument, position);
      }
      super.handleUpdate(position, oldDocument, newDocument);
    }

    // Built from the file like `index`, on the first query in Agenda's lock order.
    private QueuePlans.QueueOrder<Object> queueOrder() {
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
      Stream<Document> walk = index().walk(query, orderBy, this::getDocument);
      if (walk == null) return super.matchDocuments(query, orderBy, skip, limit, batchSize, fieldSelector);
      return matchDocumentsFromStream(query, walk, skip, limit, batchSize, null, fieldSelector);
    }
  }
}
