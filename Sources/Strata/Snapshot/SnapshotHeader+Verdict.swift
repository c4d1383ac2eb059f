import Foundation

extension SnapshotHeader {
    /// The schema each archived entity was written with, in ``entities`` order — the one check
    /// that an archive fits `schemas` (the app's, or a store's recorded ones): the fingerprint of
    /// them all, then each entity's.
    /// - Throws: `.schemaChanged` when any of them differs, or names an entity `schemas` lacks.
    func matchedSchemas(_ schemas: [EntitySchema]) throws(SnapshotRejection) -> [EntitySchema] {
        guard schemaFingerprint == SnapshotArchive.fingerprint(schemas) else { throw .schemaChanged }
        let byName = Dictionary(schemas.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var matched: [EntitySchema] = []
        for entry in entities {
            guard let schema = byName[entry.entity], SnapshotArchive.fingerprint(schema) == entry.schemaFingerprint else {
                throw .schemaChanged
            }
            matched.append(schema)
        }
        return matched
    }

    /// How an archive that decoded fits the database it would warm-start.
    enum Fit: Equatable {
        /// Same store and generation: used as is.
        case current
        /// The database is ahead, and its change log still reaches back to the archive: used and caught up.
        case behind
        /// Not used.
        case rejected(SnapshotRejection)
    }

    /// The one verdict on an archive against a database — `Store.openWarm` and the inspector
    /// both ask it: another store's archive, one newer than the database (restored or rolled
    /// back), or one older than what the change log still holds is rejected.
    func fit(storeID: UUID, generation: Int64, floor: Int64) -> Fit {
        if self.storeID != storeID { return .rejected(.otherStore) }
        if self.generation > generation { return .rejected(.newerThanDatabase) }
        if self.generation < floor { return .rejected(.historyPruned) }
        return self.generation == generation ? .current : .behind
    }
}
