// Two query plans mongo-java-server lacks, for the webhook delivery queue (issue 25), kept beside a
// collection of either backend (WorkspaceIndexedBackend.java in memory, WorkspaceIndexedH2Backend.java
// on disk). The library uses an index only for a query whose keys are exactly the index's keys, so
// every other query matches every document of its collection:
//
//  - A query that pins `_id` (a value or an `$in` list) and checks more fields, like a fenced update
//    `{_id, lockedAt}`, Agenda's job saves `{_id, name}` or a delivery's progress `{_id, status,
//    attempts}`, scanned its whole collection. Here it reads those ids through the `_id` index and
//    matches only them, as MongoDB does.
//  - Agenda's lock query (due, unlocked jobs, earliest `nextRunAt` first, then highest `priority`)
//    matched and sorted every queued job, so a worker's drain slowed with its backlog (42 deliveries/s
//    at 10,000 queued). Here the collection's documents are kept in that order (QueueOrder below) and
//    the query walks them from the front, stopping at its limit: past the jobs that are locked or
//    running, to the first due one.
//
// The matcher still checks every document it is given against the whole query, so a plan only
// decides which documents are looked at and in what order; a query neither plan serves falls back.

import de.bwaldvogel.mongo.backend.DocumentComparator;
import de.bwaldvogel.mongo.backend.DocumentWithPosition;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.bson.Document;
import java.util.Collection;
import java.util.List;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

final class QueuePlans {
  private static final String ID_FIELD = "_id";

  private QueuePlans() {}

  /**
   * The `_id` condition to read through the `_id` index: a plain value or `{$in: [...]}`; null when
   * the query does not pin `_id` that way (then it may not match by `_id` at all).
   */
  static Object idPin(Document query) {
    if (!query.containsKey(ID_FIELD)) return null;
    Object condition = query.get(ID_FIELD);
    if (!(condition instanceof Document document)) return condition;
    if (document.size() == 1 && document.get("$in") instanceof Collection<?>) return condition;
    return null;
  }

  /** The collection's unique `_id` index, or null. */
  static <P> Index<P> idIndex(List<Index<P>> indexes) {
    for (Index<P> index : indexes) {
      if (index.isUnique() && index.getKeys().size() == 1 && ID_FIELD.equals(index.getKeys().get(0).getKey())) {
        return index;
      }
    }
    return null;
  }

  /**
   * A collection's documents in Agenda's lock order, `{nextRunAt: 1, priority: -1}`, ties by `_id`.
   * Built on the first query that asks for that order (so only Agenda's jobs collection has one)
   * and kept from then on by the collection's add, remove and update hooks, which the library
   * calls with the collection's lock held.
   */
  static final class QueueOrder<P> {
    private static final Document ORDER = new Document("nextRunAt", 1).append("priority", -1).append(ID_FIELD, 1);
    private static final DocumentComparator COMPARATOR = new DocumentComparator(ORDER);

    private final TreeMap<Document, P> positions = new TreeMap<>(COMPARATOR);

    /** Is this the order Agenda's lock query asks for? */
    static boolean serves(Document orderBy) {
      if (orderBy == null || orderBy.size() != 2) return false;
      return orderBy.get("nextRunAt") instanceof Number ascending
          && ascending.intValue() == 1
          && orderBy.get("priority") instanceof Number descending
          && descending.intValue() == -1;
    }

    /** The sort key of a document: only the fields the order reads, so the map holds little. */
    private static Document key(Document document) {
      Document key = new Document();
      for (String field : ORDER.keySet()) {
        if (document.containsKey(field)) key.put(field, document.get(field));
      }
      return key;
    }

    void add(Document document, P position) {
      positions.put(key(document), position);
    }

    void remove(Document document) {
      if (document != null) positions.remove(key(document));
    }

    /** Every document, lazily read through `documents`, in the order. */
    Stream<Document> walk(Function<P, Document> documents) {
      return positions.values().stream().map(documents);
    }

    static <P> QueueOrder<P> of(Stream<DocumentWithPosition<P>> documents) {
      QueueOrder<P> order = new QueueOrder<>();
      documents.forEach(entry -> order.add(entry.getDocument(), entry.getPosition()));
      return order;
    }
  }

  /** The documents a query looks at, and whether they come in the order it asked. */
  record Plan(Stream<Document> documents, boolean ordered) {}

  /**
   * The plan for a query the library would scan, or null when neither plan serves it. `order`
   * gives the collection's QueueOrder, building it on first use.
   */
  static <P> Plan plan(
      Document query,
      Document orderBy,
      List<Index<P>> indexes,
      Supplier<QueueOrder<P>> order,
      Function<P, Document> documents) {
    Object pin = idPin(query);
    Index<P> ids = pin == null ? null : idIndex(indexes);
    if (ids != null) {
      Iterable<P> positions = ids.getPositions(new Document(ID_FIELD, pin));
      return new Plan(StreamSupport.stream(positions.spliterator(), false).map(documents), false);
    }
    if (QueueOrder.serves(orderBy)) return new Plan(order.get().walk(documents), true);
    return null;
  }
}
