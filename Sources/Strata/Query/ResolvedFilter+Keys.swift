/// What a filter pins down, for the in-memory engine to pick its candidates.
extension ResolvedFilter {
    /// The `attribute == value` conditions that every matching row must satisfy (top-level AND).
    var requiredEqualities: [Int: DatabaseValue] { topLevelEqualities().equalities }

    /// The conditions when the filter is nothing but `attribute == value` conditions joined by
    /// AND, each attribute once (an index prefix may then count its matches); nil otherwise.
    var equalitiesOnly: [Int: DatabaseValue]? {
        let found = topLevelEqualities()
        return found.isWholeFilter ? found.equalities : nil
    }

    /// The equalities of the top-level AND, and whether they are the whole filter (no other
    /// condition, no attribute compared twice).
    private func topLevelEqualities() -> (equalities: [Int: DatabaseValue], isWholeFilter: Bool) {
        var equalities: [Int: DatabaseValue] = [:]
        var isWholeFilter = true
        func collect(_ node: Node) {
            switch node {
            case .compare(let position, .equal, let value):
                if equalities.updateValue(value, forKey: position) != nil { isWholeFilter = false }
            case .and(let nodes): nodes.forEach(collect)
            default: isWholeFilter = false
            }
        }
        collect(node)
        return (equalities, isWholeFilter)
    }

    /// The full-text conditions (`.matches`) of the top-level AND, each a list of terms every
    /// matching row must match; empty when the filter requires none.
    var requiredFullText: [[FullTextTerm]] {
        func collect(_ node: Node) -> [[FullTextTerm]] {
            switch node {
            case .matches(let terms): return [terms]
            case .and(let nodes): return nodes.flatMap(collect)
            default: return []
            }
        }
        return collect(node)
    }

    /// The filter with the full-text conditions of its top-level AND (``requiredFullText``)
    /// taken as true: what is left to evaluate on a row known to match them, or nil when nothing
    /// is (the filter was only those conditions).
    var withoutRequiredFullText: ResolvedFilter? {
        func strip(_ node: Node) -> Node? {
            switch node {
            case .matches: return nil
            case .and(let nodes):
                let kept = nodes.compactMap(strip)
                return kept.isEmpty ? nil : kept.count == 1 ? kept[0] : .and(kept)
            default: return node
            }
        }
        return strip(node).map { ResolvedFilter(node: $0, schema: schema) }
    }

    /// The primary keys a matching row must have, when the filter pins them (`id == x`, `id IN […]`).
    var requiredKeys: [DatabaseValue]? {
        let key = schema.primaryKeyIndex
        func keys(_ node: Node) -> [DatabaseValue]? {
            switch node {
            case .compare(key, .equal, let value): return [value]
            case .isIn(key, let list): return list.values
            case .and(let nodes): return nodes.lazy.compactMap(keys).first
            default: return nil
            }
        }
        return keys(node)
    }
}
