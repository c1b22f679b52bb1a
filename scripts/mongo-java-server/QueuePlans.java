// Two query plans mongo-java-server lacks, for the webhook delivery queue, kept beside a
// collection of either backend (WorkspaceIndexedBackend.java in memory, WorkspaceIndexedH2Backend.java
// on disk). The library uses an index only for a query whose keys are exactly the index's keys, so
// every other query matches every document of its collection:
//
//  - A query that pins `_id` (a value or an `$in` list) and checks more fields, like a lane's claim
//    `{_id: {$in}, due_at, $or}` or an outcome `{_id, status, attempts}`, scanned its whole
//    collection. Here it reads those ids through the `_id` index and matches only them, as MongoDB
//    does.
//  - The queue's reads (a lane's due deliveries, in the queue's order `{due_at, event_id, _id}`;
//    the dispatcher's due deliveries of every endpoint) matched and sorted every delivery ever
//    kept, settled ones included, so each claim cost as much as the collection was large. Here the
//    documents with a `due_at` (pending ones: settled deliveries have none) are kept in that
//    order, per endpoint and overall (DueOrder below), and the query walks them from the front,
//    stopping at its limit.
//
// The matcher still checks every document it is given against the whole query, so a plan only
// decides which documents are looked at and in what order; a query neither plan serves falls back.

import de.bwaldvogel.mongo.backend.DocumentComparator;
import de.bwaldvogel.mongo.backend.DocumentWithPosition;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.bson.Document;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.Spliterator;
import java.util.Spliterators;
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
   * The documents that have a `due_at` date, in the queue's order `{due_at: 1, event_id: 1, _id: 1}`: overall,
   * and per `endpoint_id`. Built on the first query that asks for that order (so only the
   * deliveries collection has one) and kept from then on by the collection's add, remove and
   * update hooks, which the library calls with the collection's lock held.
   */
  static final class DueOrder<P> {
    private static final String DUE_FIELD = "due_at";
    private static final String EVENT_FIELD = "event_id";
    private static final String ENDPOINT_FIELD = "endpoint_id";
    private static final Document ORDER = new Document(DUE_FIELD, 1).append(EVENT_FIELD, 1).append(ID_FIELD, 1);
    private static final DocumentComparator COMPARATOR = new DocumentComparator(ORDER);

    private final TreeMap<Document, P> all = new TreeMap<>(COMPARATOR);
    private final Map<String, TreeMap<Document, P>> byEndpoint = new HashMap<>();

    /**
     * Is this a query the order answers exactly? Its sort must be the queue's, and it must hold a
     * range on `due_at` (which no document without a `due_at` date can match, so leaving those
     * out changes nothing).
     */
    static boolean serves(Document query, Document orderBy) {
      if (orderBy == null || orderBy.size() != ORDER.size()) return false;
      boolean sorted = true;
      for (String field : ORDER.keySet()) {
        sorted &= orderBy.get(field) instanceof Number direction && direction.intValue() == 1;
      }
      if (!sorted || !(query.get(DUE_FIELD) instanceof Document range)) return false;
      for (String operator : range.keySet()) {
        if (!List.of("$lt", "$lte", "$gt", "$gte").contains(operator)) return false;
      }
      return !range.isEmpty();
    }

    /** The sort key of a document, or null when it has no `due_at` date. */
    private static Document key(Document document) {
      Object due = document.get(DUE_FIELD);
      if (!(due instanceof java.time.Instant || due instanceof java.util.Date)) return null;
      return new Document(DUE_FIELD, document.get(DUE_FIELD))
          .append(EVENT_FIELD, document.get(EVENT_FIELD))
          .append(ID_FIELD, document.get(ID_FIELD));
    }

    void add(Document document, P position) {
      Document key = key(document);
      if (key == null) return;
      all.put(key, position);
      if (document.get(ENDPOINT_FIELD) instanceof String endpoint) {
        byEndpoint.computeIfAbsent(endpoint, e -> new TreeMap<>(COMPARATOR)).put(key, position);
      }
    }

    void remove(Document document) {
      if (document == null) return;
      Document key = key(document);
      if (key == null) return;
      all.remove(key);
      if (document.get(ENDPOINT_FIELD) instanceof String endpoint) {
        TreeMap<Document, P> mine = byEndpoint.get(endpoint);
        if (mine == null) return;
        mine.remove(key);
        if (mine.isEmpty()) byEndpoint.remove(endpoint);
      }
    }

    /**
     * The documents a query may match, lazily read through `documents`, in the order: those of
     * its endpoint when it names one by equality; those of every other endpoint when it leaves
     * some out (`$nin`, the dispatcher's round) and their backlogs outnumber the endpoints, so
     * the walk never passes over a left-out endpoint's backlog; else all (the matcher applies
     * any other condition on the endpoint).
     */
    Stream<Document> walk(Document query, Function<P, Document> documents) {
      Object endpoint = query.get(ENDPOINT_FIELD);
      if (endpoint instanceof String name) {
        TreeMap<Document, P> mine = byEndpoint.get(name);
        return (mine == null ? List.<P>of() : mine.values()).stream().map(documents);
      }
      if (endpoint instanceof Document condition
          && condition.size() == 1
          && condition.get("$nin") instanceof Collection<?> names) {
        Set<Object> leftOut = new HashSet<>(names);
        long passedOver = 0;
        for (Object name : leftOut) {
          TreeMap<Document, P> theirs = byEndpoint.get(name);
          if (theirs != null) passedOver += theirs.size();
        }
        if (passedOver > byEndpoint.size()) return mergedExcept(leftOut).map(documents);
      }
      return all.values().stream().map(documents);
    }

    /** One endpoint's next document in the order, and the rest of its documents. */
    private record Head<P>(Map.Entry<Document, P> entry, Iterator<Map.Entry<Document, P>> rest) {}

    /**
     * Every endpoint's documents but those `leftOut`, merged into the order: a heap of each
     * endpoint's first, so a walk costs the endpoints once and then what it reads.
     */
    private Stream<P> mergedExcept(Set<Object> leftOut) {
      PriorityQueue<Head<P>> heads =
          new PriorityQueue<>((a, b) -> COMPARATOR.compare(a.entry().getKey(), b.entry().getKey()));
      for (Map.Entry<String, TreeMap<Document, P>> endpoint : byEndpoint.entrySet()) {
        if (leftOut.contains(endpoint.getKey())) continue;
        Iterator<Map.Entry<Document, P>> rest = endpoint.getValue().entrySet().iterator();
        if (rest.hasNext()) heads.add(new Head<>(rest.next(), rest));
      }
      Iterator<P> merged =
          new Iterator<>() {
            @Override
            public boolean hasNext() {
              return !heads.isEmpty();
            }

            @Override
            public P next() {
              Head<P> head = heads.poll();
              if (head.rest().hasNext()) heads.add(new Head<>(head.rest().next(), head.rest()));
              return head.entry().getValue();
            }
          };
      return StreamSupport.stream(Spliterators.spliteratorUnknownSize(merged, Spliterator.ORDERED), false);
    }

    static <P> DueOrder<P> of(Stream<DocumentWithPosition<P>> documents) {
      DueOrder<P> order = new DueOrder<>();
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
      Supplier<DueOrder<P>> order,
      Function<P, Document> documents) {
    Object pin = idPin(query);
    Index<P> ids = pin == null ? null : idIndex(indexes);
    if (ids != null) {
      Iterable<P> positions = ids.getPositions(new Document(ID_FIELD, pin));
      return new Plan(StreamSupport.stream(positions.spliterator(), false).map(documents), false);
    }
    if (DueOrder.serves(query, orderBy)) {
      Stream<Document> walk = order.get().walk(query, documents);
      if (walk != null) return new Plan(walk, true);
    }
    return null;
  }
}
