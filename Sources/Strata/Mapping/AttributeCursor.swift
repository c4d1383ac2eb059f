/// Maps coding keys to attribute positions. Synthesized `Codable` code visits keys in
/// declaration order, which is the schema's order, so the next position is tried first and the
/// dictionary is the fallback.
struct AttributeCursor {
    let schema: EntitySchema
    private let names: [String]
    private var next = 0

    init(schema: EntitySchema) {
        self.schema = schema
        self.names = schema.attributes.map(\.name)
    }

    mutating func reset() { next = 0 }

    mutating func position(of key: String) -> Int? {
        if next < names.count, names[next] == key {
            next += 1
            return next - 1
        }
        if next > 0, names[next - 1] == key { return next - 1 }
        guard let position = schema.position(of: key) else { return nil }
        next = position + 1
        return position
    }
}
