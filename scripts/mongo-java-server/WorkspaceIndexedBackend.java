// mongo-java-server's in-memory backend (`pnpm start --ephemeral`, the tests), whose collections
// report a findAndModify's changes for the oplog (FindAndModifyOplog.java).

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;
import de.bwaldvogel.mongo.bson.Document;
import io.netty.channel.Channel;

public final class WorkspaceIndexedBackend extends MemoryBackend {
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
    Collection(MongoDatabase database, String name, CollectionOptions options, CursorRegistry cursors) {
      super(database, name, options, cursors);
    }

    @Override
    protected void handleUpdate(Integer position, Document oldDocument, Document newDocument) {
      super.handleUpdate(position, oldDocument, newDocument);
      FindAndModifyOplog.updated(this, newDocument.get("_id"));
    }

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
  }
}
