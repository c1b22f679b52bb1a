// The index mongo-java-server lacks for Deskline's lists, kept beside a collection of either
// backend (WorkspaceIndexedBackend.java in memory, WorkspaceIndexedH2Backend.java on disk): per
// workspace, its documents' positions in `_id` order. Deskline's lists ask for a workspace's
// documents matching some filters, sorted by `_id`, `limit` of them; mongo-java-server answers
// those by matching every document of the collection and sorting the matches, so a list of 10 got
// ten times slower with ten times the data. With this index a list walks the workspace's documents
// in the order asked, from the page's `_id` bound, and stops after `limit` matches: what the
// compound `{workspace_id, ..., _id}` indexes do on MongoDB. A contact search walks only the
// documents holding its key instead, and an endpoint's deliveries only that endpoint's
// (FieldValueIndex.java). Every other query is left to the library.
//
// The matcher still checks every walked document against the whole query, so the index only
// decides the order and where to start; a query it cannot serve exactly falls back. It lives in
// memory only: the disk backend rebuilds it from the documents when a collection opens.
//
// Not thread-safe by itself: the library calls a collection's hooks (add, remove, update, match)
// with the collection's lock held, so the index never differs from the documents while a query
// walks it.

import de.bwaldvogel.mongo.backend.ValueComparator;
import de.bwaldvogel.mongo.bson.Document;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.stream.Stream;

final class WorkspaceIndex<P> {
  static final String WORKSPACE_FIELD = "workspace_id";
  static final String ID_FIELD = "_id";

  /** Workspace id → that workspace's documents' positions by `_id` (MongoDB's value order). */
  private final Map<String, NavigableMap<Object, P>> byWorkspace = new HashMap<>();
  /**
   * Per workspace and value of a field a list asks for by equality, the documents holding it: a
   * narrower walk (a contact search's keys, an endpoint's deliveries).
   */
  private final List<FieldValueIndex<P>> narrower =
      List.of(new FieldValueIndex<>("search_keys"), new FieldValueIndex<>("endpoint_id"));
  /**
   * Documents with a `workspace_id` that is not a string (Deskline writes none). An equality
   * query can match those too (an array holding the value, say), so while there are any, every
   * query goes to the library's full scan.
   */
  private int irregular;

  void add(Document document, P position) {
    Object workspace = document.get(WORKSPACE_FIELD);
    if (workspace instanceof String key) {
      byWorkspace
          .computeIfAbsent(key, k -> new TreeMap<>(ValueComparator.asc()))
          .put(document.get(ID_FIELD), position);
      for (FieldValueIndex<P> index : narrower) index.add(key, document, position);
    } else if (workspace != null) {
      irregular++;
    }
  }

  void remove(Document document) {
    if (document == null) return;
    Object workspace = document.get(WORKSPACE_FIELD);
    if (workspace instanceof String key) {
      for (FieldValueIndex<P> index : narrower) index.remove(key, document);
      NavigableMap<Object, P> ids = byWorkspace.get(key);
      if (ids == null) return;
      ids.remove(document.get(ID_FIELD));
      if (ids.isEmpty()) byWorkspace.remove(key);
    } else if (workspace != null) {
      irregular--;
    }
  }

  /**
   * The documents a list query must look at, in the order it asks, lazily read through
   * `documents` (so the library's filter, skip and limit stop the walk at the page's end); null
   * when this index cannot serve the query and the library must scan.
   */
  Stream<Document> walk(Document query, Document orderBy, Function<P, Document> documents) {
    Integer direction = idOrder(orderBy);
    if (direction == null || irregular > 0 || !(query.get(WORKSPACE_FIELD) instanceof String workspace)) {
      return null;
    }
    // The fewest candidates: each set holds every match, and the matcher checks the whole query.
    NavigableMap<Object, P> ids = null;
    for (FieldValueIndex<P> index : narrower) {
      NavigableMap<Object, P> candidates = index.candidates(workspace, query.get(index.field));
      if (candidates != null && (ids == null || candidates.size() < ids.size())) ids = candidates;
    }
    if (ids == null) ids = byWorkspace.getOrDefault(workspace, new TreeMap<>());
    NavigableMap<Object, P> range = idRange(ids, query.get(ID_FIELD));
    if (direction < 0) range = range.descendingMap();
    return range.values().stream().map(documents);
  }

  /** 1 or -1 for a sort on `_id` alone, else null. */
  private static Integer idOrder(Document orderBy) {
    if (orderBy == null || orderBy.size() != 1 || !(orderBy.get(ID_FIELD) instanceof Number order)) {
      return null;
    }
    int value = order.intValue();
    return value == 1 || value == -1 ? value : null;
  }

  /**
   * The ids within the query's `_id` bounds when it has only `$lt`, `$lte`, `$gt` and `$gte`
   * ones, so a later page starts where the last one ended; otherwise all of them.
   */
  private static <P> NavigableMap<Object, P> idRange(NavigableMap<Object, P> ids, Object condition) {
    if (!(condition instanceof Document bounds) || bounds.isEmpty()) return ids;
    Comparator<Object> order = ValueComparator.asc();
    Object lower = null, upper = null;
    boolean lowerInclusive = false, upperInclusive = false;
    for (Map.Entry<String, Object> bound : bounds.entrySet()) {
      Object value = bound.getValue();
      // Only string bounds narrow (Deskline's ids are strings). The range then holds every id
      // MongoDB would match, and maybe ids of other types, which the matcher drops.
      if (!(value instanceof String)) return ids;
      boolean inclusive = bound.getKey().endsWith("e");
      switch (bound.getKey()) {
        case "$lt", "$lte" -> {
          int c = upper == null ? -1 : order.compare(value, upper);
          if (c < 0 || (c == 0 && !inclusive)) {
            upper = value;
            upperInclusive = inclusive;
          }
        }
        case "$gt", "$gte" -> {
          int c = lower == null ? 1 : order.compare(value, lower);
          if (c > 0 || (c == 0 && !inclusive)) {
            lower = value;
            lowerInclusive = inclusive;
          }
        }
        default -> {
          return ids;
        }
      }
    }
    if (lower != null && upper != null) {
      if (order.compare(lower, upper) > 0) return new TreeMap<>(order); // crossed: none match
      return ids.subMap(lower, lowerInclusive, upper, upperInclusive);
    }
    if (lower != null) return ids.tailMap(lower, lowerInclusive);
    return ids.headMap(upper, upperInclusive);
  }
}
