import Foundation
import Strata

// P4c's app: a notes app with four entities — notebooks and tags (small, resident), notes
// (resident, title and body in full text) and the links between notes and tags (`.notKept`: the
// UI never lists them). Notes and links, saved by the thousand, have row codecs by hand, as
// ``Article``'s.

/// Small and saved rarely: the default (`Codable`) row codec.
struct Notebook: Entity, Equatable {
    var id: String
    var name: String

    static let tableName = "notebooks"
    static let isResident = true
}

/// Small and saved rarely: the default (`Codable`) row codec.
struct Tag: Entity, Equatable {
    var id: String
    var name: String
    var color: Int64

    static let tableName = "tags"
    static let isResident = true
}

struct Note: Entity, Equatable {
    var id: String
    var notebookID: String
    var title: String
    var body: String
    var created: Date
    var modified: Date
    var isPinned: Bool

    static let tableName = "notes"
    static let indexes = [EntityIndex(["notebookID"])]
    static let fullTextAttributes = ["title", "body"]
    static let isResident = true
}

/// The row codec by hand, in an extension so that the memberwise initializer stays.
extension Note {
    func encode(row: inout RowWriter) throws {
        try row.write(id)
        try row.write(notebookID)
        try row.write(title)
        try row.write(body)
        try row.write(created)
        try row.write(modified)
        try row.write(isPinned)
    }

    init(row: inout RowReader) throws {
        id = try row.read()
        notebookID = try row.read()
        title = try row.read()
        body = try row.read()
        created = try row.read()
        modified = try row.read()
        isPinned = try row.read()
    }
}

/// A note–tag link: a join entity the main context does not keep (``Residency/notKept``).
struct NoteTag: Entity, Equatable {
    var id: String
    var noteID: String
    var tagID: String

    static let tableName = "note_tags"
    static let indexes = [EntityIndex(["noteID"]), EntityIndex(["tagID"])]
    static let residency = Residency.notKept
}

/// The row codec by hand, in an extension so that the memberwise initializer stays.
extension NoteTag {
    func encode(row: inout RowWriter) throws {
        try row.write(id)
        try row.write(noteID)
        try row.write(tagID)
    }

    init(row: inout RowReader) throws {
        id = try row.read()
        noteID = try row.read()
        tagID = try row.read()
    }
}

/// P4c's data: the notebooks and tags a store starts with, and what six workers import — four
/// saving notes (5 saves each), two saving links (4 saves of five times as many each). At full
/// size (100,000 articles) 1,000 notes and 5,000 links per save; scaled with `--size`, never
/// under 200 notes and 1,000 links per save. Titles and bodies are the articles'.
struct NotesShape: Sendable {
    static let entities: [any Entity.Type] = [Notebook.self, Tag.self, Note.self, NoteTag.self]
    static let notebookCount = 20
    static let tagCount = 200
    /// The notebook the live query shows.
    static let shownNotebook = notebookID(3)

    let notebooks: [Notebook]
    let tags: [Tag]
    /// Per worker, per save, the notes it inserts.
    let noteSaves: [[[Note]]]
    /// Per worker, per save, the links it inserts.
    let linkSaves: [[[NoteTag]]]

    var noteCount: Int { noteSaves.joined().joined().count }
    var linkCount: Int { linkSaves.joined().joined().count }
    var saveCount: Int { noteSaves.joined().count + linkSaves.joined().count }
    /// The notes the live query shows once everything is merged.
    var shownCount: Int { noteSaves.joined().joined().count { $0.notebookID == Self.shownNotebook } }

    init(_ data: DataSet) {
        let notesPerSave = max(200, 1_000 * data.articles.count / 100_000)
        let linksPerSave = 5 * notesPerSave
        notebooks = (0..<Self.notebookCount).map { Notebook(id: Self.notebookID($0), name: "Notebook \($0)") }
        tags = (0..<Self.tagCount).map { Tag(id: "tag-\($0)", name: "tag \($0)", color: Int64($0 % 8)) }
        let base = Date(timeIntervalSinceReferenceDate: 750_000_000)
        var next = 0
        noteSaves = (0..<4).map { _ in
            (0..<5).map { _ in
                (0..<notesPerSave).map { _ in
                    defer { next += 1 }
                    let article = data.articles[next % data.articles.count]
                    let date = base.addingTimeInterval(Double(next) * 30)
                    return Note(id: Self.noteID(next), notebookID: Self.notebookID(next % Self.notebookCount),
                                title: article.title, body: article.summary, created: date, modified: date,
                                isPinned: next % 50 == 0)
                }
            }
        }
        let notes = next
        var link = 0
        linkSaves = (0..<2).map { _ in
            (0..<4).map { _ in
                (0..<linksPerSave).map { _ in
                    defer { link += 1 }
                    return NoteTag(id: "link-\(link)", noteID: Self.noteID(link % notes), tagID: "tag-\(link * 7 % Self.tagCount)")
                }
            }
        }
    }

    static func notebookID(_ index: Int) -> String { "notebook-\(index)" }
    static func noteID(_ index: Int) -> String { "note-\(index)" }

    /// The live query: the shown notebook's notes, last modified first.
    static var shownNotes: Query<Note> {
        Query(where: Attribute("notebookID") == shownNotebook, sortedBy: [Attribute("modified").descending])
    }
}
