import Foundation
import Strata

/// A subscribed feed of the demo's RSS reader. Resident: the main context always holds every feed.
public struct Feed: Entity, Equatable {
    public var id: Int64
    public var title: String
    public var url: URL
    public var category: String

    public static let tableName = "feeds"
    public static let isResident = true

    public init(id: Int64, title: String, url: URL, category: String) {
        self.id = id
        self.title = title
        self.url = url
        self.category = category
    }
}
