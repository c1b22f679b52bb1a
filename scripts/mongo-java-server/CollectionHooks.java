// What a collection of either mongo-java-server backend (WorkspaceIndexedBackend.java in memory,
// WorkspaceIndexedH2Backend.java on disk) does in the library's hooks, written once: it keeps the
// indexes of CollectionIndexes.java beside the documents, reports a findAndModify's changes for
// the oplog (FindAndModifyOplog.java), and lets a query an index serves read only what it needs.
// The two backends' collections extend different library classes, so each overrides the hooks and
// hands them here with the library's own step (its `super` call) as a callback.

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.DocumentWithPosition;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.bson.Document;
import java.util.Comparator;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Stream;

final class CollectionHooks<P> {
  private final MongoCollection<P> collection;
  private final Function<P, Document> documents;
  private final CollectionIndexes<P> indexes;

  /** `all` streams the collection's documents (for a build), `documents` reads one by position. */
  CollectionHooks(
      MongoCollection<P> collection, Supplier<Stream<DocumentWithPosition<P>>> all, Function<P, Document> documents) {
    this.collection = collection;
    this.documents = documents;
    this.indexes = new CollectionIndexes<>(all, documents);
  }

  /** The library stores a document (`insert` returns its position). */
  P insert(Document document, Supplier<P> insert) {
    return indexes.add(document, insert);
  }

  /** The library removes the document at `position` (through `removal`). */
  void remove(P position, Runnable removal) {
    indexes.remove(documents.apply(position));
    removal.run();
  }

  /** The library replaces the document at `position` (through `update`). */
  void update(P position, Document oldDocument, Document newDocument, Runnable update) {
    indexes.update(oldDocument, newDocument, position);
    update.run();
    FindAndModifyOplog.updated(collection, newDocument.get("_id"));
  }

  // The public add and remove, called once a document is in (or out of) the collection and its
  // indexes: what a findAndModify did, for the oplog.

  void added(Document document) {
    FindAndModifyOplog.inserted(collection, document);
  }

  void removed(Document document) {
    FindAndModifyOplog.deleted(collection, document.get("_id"));
  }

  /**
   * A query: through an index's plan when one serves it (`fromStream` matches the documents it
   * gives, in the order given, or by `comparator` of `orderBy` when the plan is unordered), else
   * by the library's scan (`scan`).
   */
  QueryResult match(
      Document query,
      Document orderBy,
      List<Index<P>> collectionIndexes,
      Function<Document, Comparator<Document>> comparator,
      BiFunction<Stream<Document>, Comparator<Document>, QueryResult> fromStream,
      Supplier<QueryResult> scan) {
    QueuePlans.Plan plan = indexes.plan(query, orderBy, collectionIndexes);
    if (plan == null) return scan.get();
    // A plan in the order asked needs no comparator.
    return fromStream.apply(plan.documents(), plan.ordered() ? null : comparator.apply(orderBy));
  }
}
