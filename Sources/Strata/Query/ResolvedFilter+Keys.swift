/// What a filter pins down, for the in-memory engine to pick its candidates.
extension ResolvedFilter {
    /// The `attribute == value` conditions that every matching row must satisfy (top-level AND).
    var requiredEqualities: [Int: DatabaseValue] {
        var result: [Int: DatabaseValue] = [:]
        func collect(_ node: Node) {
            switch node {
            case .compare(let position, .equal, let value): result[position] = value
            case .and(let nodes): nodes.forEach(collect)
            default: break
            }
        }
        collect(node)
        return result
    }

    /// The conditions when the filter is nothing but `attribute == value` conditions joined by
    /// AND (an index prefix may then count its matches); nil otherwise.
    var equalitiesOnly: [Int: DatabaseValue]? {
        var result: [Int: DatabaseValue] = [:]
        func collect(_ node: Node) -> Bool {
            switch node {
            case .compare(let position, .equal, let value):
                guard result[position] == nil else { return false }
                result[position] = value
                return true
            case .and(let nodes): return nodes.allSatisfy(collect)
            default: return false
            }
        }
        return collect(node) ? result : nil
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
