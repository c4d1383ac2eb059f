import Foundation

extension SnapshotHeader {
    /// The schema each archived entity was written with, in ``entities`` order — the one check
    /// that an archive fits `schemas` (the app's, or a store's recorded ones): the fingerprint of
    /// them all, then each entity's.
    /// - Throws: ``SnapshotRejection/schemaChanged`` when any of them differs, or names an entity
    ///   `schemas` lacks.
    func matchedSchemas(_ schemas: [EntitySchema]) throws(StrataError) -> [EntitySchema] {
        let expected = SnapshotArchive.fingerprint(schemas)
        guard schemaFingerprint == expected else {
            throw .snapshot(.schemaChanged, "its schema fingerprint is \(schemaFingerprint.hexadecimal); "
                            + "the entities' is \(expected.hexadecimal)")
        }
        let byName = Dictionary(schemas.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var matched: [EntitySchema] = []
        for entry in entities {
            guard let schema = byName[entry.entity] else {
                throw .snapshot(.schemaChanged, "it holds \(entry.entity), which is not registered", entity: entry.entity)
            }
            let fingerprint = SnapshotArchive.fingerprint(schema)
            guard fingerprint == entry.schemaFingerprint else {
                throw .snapshot(.schemaChanged, "\(entry.entity) was archived with schema fingerprint "
                                + "\(entry.schemaFingerprint.hexadecimal); its schema's is \(fingerprint.hexadecimal)",
                                entity: entry.entity)
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
        /// Not used, for the reason the error gives.
        case rejected(StrataError)
    }

    /// The one verdict on an archive against a database — `Store.openWarm` and the inspector
    /// both ask it: another store's archive, one newer than the database (restored or rolled
    /// back), or one older than what the change log still holds is rejected.
    func fit(storeID: UUID, generation: Int64, floor: Int64) -> Fit {
        if self.storeID != storeID {
            return .rejected(.snapshot(.otherStore, "it was taken from store \(self.storeID.uuidString); "
                                       + "the database is store \(storeID.uuidString)"))
        }
        if self.generation > generation {
            return .rejected(.snapshot(.newerThanDatabase, "it reflects generation \(self.generation); "
                                       + "the database is at generation \(generation)"))
        }
        if self.generation < floor {
            return .rejected(.snapshot(.historyPruned, "it reflects generation \(self.generation); "
                                       + "the change log was pruned through generation \(floor)"))
        }
        return self.generation == generation ? .current : .behind
    }
}
