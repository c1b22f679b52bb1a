// mongo-java-server's persistent backend (`pnpm start`'s data under .deskline/data when no mongod
// can be had): H2's MVStore, one file, with the indexes of CollectionIndexes.java. Those live in
// memory and are rebuilt from the documents on a collection's first query or write after the file
// opens (one pass over that collection); the unique indexes are the library's own, kept in the file.
// Its collection's hooks hand over to CollectionHooks.java, as the in-memory backend's do.
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
import io.netty.channel.Channel;
import java.time.Clock;
import java.util.List;
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

  /**
   * Opens (or creates) the file; the databases already in it are opened here, through the override
   * below. `clock`: the time it says (`hello`'s localTime) and its oplog stamps; Launcher.java may move it.
   */
  public WorkspaceIndexedH2Backend(String fileName, Clock clock) {
    super(new MVStore.Builder().fileName(fileName).cacheSize(CACHE_MB).open(), clock);
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

  // A findAndModify's changes go to the oplog too, when it is on (FindAndModifyOplog.java).
  @Override
  public Document handleCommand(Channel channel, String databaseName, String command, Document query) {
    return FindAndModifyOplog.handle(
        databaseName, command, query, oplog, () -> super.handleCommand(channel, databaseName, command, query));
  }

  /** A collection's documents, stored as BSON (BsonDocumentType.java). */
  private static MVMap<Object, Document> documents(MVStore store, String name) {
    return store.openMap(name, new MVMap.Builder<Object, Document>().valueType(BsonDocumentType.INSTANCE));
  }

  static final class Collection extends H2Collection {
    private CollectionHooks<Object> hooks;

    Collection(
        MongoDatabase database,
        String name,
        CollectionOptions options,
        MVMap<Object, Document> documents,
        MVMap<String, Object> meta,
        CursorRegistry cursors) {
      super(database, name, options, documents, meta, cursors);
    }

    // Made on first use, like the indexes it builds from the file, so opening a large file does
    // not wait for them (and a hook H2Collection's constructor might call finds it all the same).
    private CollectionHooks<Object> hooks() {
      if (hooks == null) hooks = new CollectionHooks<>(this, this::streamAllDocumentsWithPosition, this::getDocument);
      return hooks;
    }

    @Override
    protected Object addDocumentInternal(Document document) {
      return hooks().insert(document, () -> super.addDocumentInternal(document));
    }

    @Override
    protected void removeDocument(Object position) {
      hooks().remove(position, () -> super.removeDocument(position));
    }

    @Override
    protected void handleUpdate(Object position, Document oldDocument, Document newDocument) {
      hooks().update(position, oldDocument, newDocument, () -> super.handleUpdate(position, oldDocument, newDocument));
    }

    @Override
    public void addDocument(Document document) {
      super.addDocument(document);
      hooks().added(document);
    }

    @Override
    public void removeDocument(Document document) {
      super.removeDocument(document);
      hooks().removed(document);
    }

    @Override
    protected QueryResult matchDocuments(
        Document query, Document orderBy, int skip, int limit, int batchSize, Document fieldSelector) {
      return hooks().match(query, orderBy, getIndexes(), Collection::deriveComparator,
          (documents, order) -> matchDocumentsFromStream(query, documents, skip, limit, batchSize, order, fieldSelector),
          () -> super.matchDocuments(query, orderBy, skip, limit, batchSize, fieldSelector));
    }
  }
}
