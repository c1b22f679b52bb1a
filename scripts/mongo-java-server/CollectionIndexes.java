// The indexes Deskline keeps beside a collection of either mongo-java-server backend
// (WorkspaceIndexedBackend.java in memory, WorkspaceIndexedH2Backend.java on disk): the
// per-workspace `_id` index of WorkspaceIndex.java and the delivery queue's plans of
// QueuePlans.java. A collection's write hooks keep them and its scanning query path asks them
// first, so each backend only delegates. They live in memory and are built from the collection's
// documents on first use (the disk backend's file may hold documents already); the queue order
// only on the first query in the delivery queue's order, so only the deliveries collection has one.
//
// Not thread-safe by itself: the library calls a collection's hooks with its lock held.

import de.bwaldvogel.mongo.backend.DocumentWithPosition;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.bson.Document;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Stream;

final class CollectionIndexes<P> {
  private final Supplier<Stream<DocumentWithPosition<P>>> all;
  private final Function<P, Document> documents;
  private WorkspaceIndex<P> workspaces;
  private QueuePlans.DueOrder<P> queueOrder;

  /** `all` streams the collection's documents (for a build), `documents` reads one by position. */
  CollectionIndexes(Supplier<Stream<DocumentWithPosition<P>>> all, Function<P, Document> documents) {
    this.all = all;
    this.documents = documents;
  }

  private WorkspaceIndex<P> workspaces() {
    if (workspaces == null) {
      WorkspaceIndex<P> built = new WorkspaceIndex<>();
      all.get().forEach(entry -> built.add(entry.getDocument(), entry.getPosition()));
      workspaces = built;
    }
    return workspaces;
  }

  private QueuePlans.DueOrder<P> queueOrder() {
    if (queueOrder == null) queueOrder = QueuePlans.DueOrder.of(all.get());
    return queueOrder;
  }

  /**
   * Stores a document through `insert` (which returns its position) and indexes it. The indexes
   * are built first: a build after the insert would find the new document and count it twice.
   */
  P add(Document document, Supplier<P> insert) {
    workspaces();
    P position = insert.get();
    index(document, position);
    return position;
  }

  void remove(Document document) {
    workspaces().remove(document);
    if (queueOrder != null) queueOrder.remove(document);
  }

  void update(Document oldDocument, Document newDocument, P position) {
    remove(oldDocument);
    index(newDocument, position);
  }

  private void index(Document document, P position) {
    workspaces().add(document, position);
    if (queueOrder != null) queueOrder.add(document, position);
  }

  /**
   * The documents a query the library would scan looks at instead, and whether they come in the
   * order it asked; null when no index serves it and the library must scan.
   */
  QueuePlans.Plan plan(Document query, Document orderBy, List<Index<P>> indexes) {
    QueuePlans.Plan plan = QueuePlans.plan(query, orderBy, indexes, this::queueOrder, documents);
    if (plan != null) return plan;
    Stream<Document> walk = workspaces().walk(query, orderBy, documents);
    return walk == null ? null : new QueuePlans.Plan(walk, true);
  }
}
