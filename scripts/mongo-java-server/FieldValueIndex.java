// A narrower walk than the workspace's for a list on mongo-java-server, kept by WorkspaceIndex.java
// beside its per-workspace `_id` order: per workspace and value of one field, the documents
// holding that value, in `_id` order. The library ignores the non-unique compound indexes MongoDB
// serves such lists with, and the workspace walk alone reads every document of the workspace to
// find the few a rare value holds. Two are kept:
//   - `search_keys`: a contact search is `{workspace_id, search_keys: <key>}` (or `$all` of
//     several keys) sorted by `_id` (docs/decisions.md, "Search by word prefix");
//   - `endpoint_id`: an endpoint's newest deliveries, `{workspace_id, endpoint_id}` sorted by
//     `_id` descending, read for every endpoint of a page of the endpoint list (their
//     `recent_deliveries`): the workspace walk read every delivery of the workspace for each
//     endpoint with fewer than a page of its own (docs/decisions.md, "The console's reads:
//     counted when asked, bounded").
// With this, the walk reads only the documents holding the query's rarest value, from the page's
// `_id` bound, and stops at the limit; the library's matcher still checks each against the whole
// query.
//
// Only documents with a string `workspace_id` are kept (WorkspaceIndex.java sends no others), and
// only string values: a query's value is a string, and MongoDB compares an array's elements one
// level down, so no other element can equal it.

import de.bwaldvogel.mongo.backend.ValueComparator;
import de.bwaldvogel.mongo.bson.Document;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;

final class FieldValueIndex<P> {
  /** The field whose values this keeps. */
  final String field;

  /** Workspace and value (`postingKey`) → the ids of the documents holding that value, with their positions. */
  private final Map<String, NavigableMap<Object, P>> postings = new HashMap<>();

  FieldValueIndex(String field) {
    this.field = field;
  }

  // A character no workspace id holds, so two pairs never make one string.
  private static String postingKey(String workspace, String key) {
    return workspace + '\u0000' + key;
  }

  void add(String workspace, Document document, P position) {
    Object id = document.get(WorkspaceIndex.ID_FIELD);
    for (String key : keysOf(document)) {
      postings.computeIfAbsent(postingKey(workspace, key), k -> new TreeMap<>(ValueComparator.asc())).put(id, position);
    }
  }

  void remove(String workspace, Document document) {
    Object id = document.get(WorkspaceIndex.ID_FIELD);
    for (String key : keysOf(document)) {
      String posting = postingKey(workspace, key);
      NavigableMap<Object, P> ids = postings.get(posting);
      if (ids == null) continue;
      ids.remove(id);
      if (ids.isEmpty()) postings.remove(posting);
    }
  }

  /**
   * The documents of `workspace` a query's condition on the field can match, by `_id`: for one
   * value its posting list, for `{$all: [values]}` the shortest of theirs (a match holds every
   * value); null when the condition is absent or of another form, so the caller walks the workspace.
   */
  NavigableMap<Object, P> candidates(String workspace, Object condition) {
    List<String> keys = wanted(condition);
    if (keys == null) return null;
    NavigableMap<Object, P> shortest = null;
    for (String key : keys) {
      NavigableMap<Object, P> ids = postings.get(postingKey(workspace, key));
      if (ids == null) return Collections.emptyNavigableMap();
      if (shortest == null || ids.size() < shortest.size()) shortest = ids;
    }
    return shortest;
  }

  /** The keys a condition asks for (a string, or `$all` of strings alone), or null. */
  private static List<String> wanted(Object condition) {
    if (condition instanceof String key) return List.of(key);
    if (!(condition instanceof Document document) || document.size() != 1) return null;
    if (!(document.get("$all") instanceof Collection<?> all) || all.isEmpty()) return null;
    List<String> keys = new ArrayList<>();
    for (Object key : all) {
      if (!(key instanceof String text)) return null;
      keys.add(text);
    }
    return keys;
  }

  /** The string values a document holds in the field (a lone string, or an array's strings). */
  private Set<String> keysOf(Document document) {
    Object value = document.get(field);
    Set<String> keys = new LinkedHashSet<>();
    if (value instanceof String key) keys.add(key);
    if (value instanceof Collection<?> values) {
      for (Object key : values) if (key instanceof String text) keys.add(text);
    }
    return keys;
  }
}
