// The index behind a contact `search` on mongo-java-server, kept by WorkspaceIndex.java beside its
// per-workspace `_id` order: per workspace and search key, the documents holding that key in
// `search_keys`, in `_id` order. A search is `{workspace_id, search_keys: <key>}` (or `$all` of
// several keys) sorted by `_id`; the library ignores the `{workspace_id, search_keys, _id}` index
// MongoDB serves it with (non-unique), and the workspace walk alone reads every contact of the
// workspace to find a rare key. With this, the walk reads only the documents holding the query's
// rarest key, from the page's `_id` bound, and stops at the limit; the library's matcher still
// checks each against the whole query (docs/decisions.md, "Search by word prefix").
//
// Only documents with a string `workspace_id` are kept (WorkspaceIndex.java sends no others), and
// only string keys: a query's key is a string, and MongoDB compares an array's elements one level
// down, so no other element can equal it.

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

final class SearchKeyIndex<P> {
  static final String FIELD = "search_keys";

  /** Workspace and key (`postingKey`) → the ids of the documents holding that key, with their positions. */
  private final Map<String, NavigableMap<Object, P>> postings = new HashMap<>();

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
   * The documents of `workspace` a query's `search_keys` condition can match, by `_id`: for one
   * key its posting list, for `{$all: [keys]}` the shortest of theirs (a match holds every key);
   * null when the condition is absent or of another form, so the caller walks the workspace.
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

  /** The string keys a document holds (a lone string too: MongoDB's equality matches it). */
  private static Set<String> keysOf(Document document) {
    Object value = document.get(FIELD);
    Set<String> keys = new LinkedHashSet<>();
    if (value instanceof String key) keys.add(key);
    if (value instanceof Collection<?> values) {
      for (Object key : values) if (key instanceof String text) keys.add(text);
    }
    return keys;
  }
}
