import Foundation
import Strata

/// Where the demo keeps its store and snapshot, and how it clears them before a run.
struct DemoPaths: Sendable {
    let store: String
    let snapshot: String

    init(store: String) {
        self.store = store
        let url = URL(fileURLWithPath: store)
        let base = url.pathExtension.isEmpty ? url : url.deletingPathExtension()
        snapshot = base.path + ".snapshot"
    }

    /// `$XDG_DATA_HOME/strata/demo.sqlite`, else `~/.local/share/strata/demo.sqlite`
    /// (`~/Library/Application Support/strata/demo.sqlite` on macOS), where `~` is `$HOME`. The
    /// directory is created.
    static func defaultStore() throws -> String {
        let environment = ProcessInfo.processInfo.environment
        let directory: URL
        #if os(macOS)
        directory = home(environment).appendingPathComponent("Library/Application Support/strata", isDirectory: true)
        #else
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
            directory = URL(fileURLWithPath: data, isDirectory: true).appendingPathComponent("strata", isDirectory: true)
        } else {
            directory = home(environment).appendingPathComponent(".local/share/strata", isDirectory: true)
        }
        #endif
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw CLIFailure.badInput("cannot create the data directory \(directory.path): \(error.localizedDescription)")
        }
        return directory.appendingPathComponent("demo.sqlite").path
    }

    /// The home directory: `$HOME` when it is an absolute path — what `~` means in a shell, and
    /// what a user points elsewhere on purpose — else the account's (Foundation's
    /// `homeDirectoryForCurrentUser` reads the account database on Linux, not `$HOME`).
    static func home(_ environment: [String: String]) -> URL {
        if let home = environment["HOME"], home.hasPrefix("/") { return URL(fileURLWithPath: home, isDirectory: true) }
        return FileManager.default.homeDirectoryForCurrentUser
    }

    /// Checks, before anything runs, that `store` can be created: its directory exists and is
    /// writable. (The demo creates its default directory, never one given with `--path`.)
    static func requireDirectory(of store: String) throws {
        let directory = URL(fileURLWithPath: store).deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) else {
            throw CLIFailure.usage("--path \(store): the directory \(directory) does not exist; create it or pass another --path")
        }
        guard isDirectory.boolValue else {
            throw CLIFailure.usage("--path \(store): \(directory) is not a directory")
        }
        guard FileManager.default.isWritableFile(atPath: directory) else {
            throw CLIFailure.usage("--path \(store): the directory \(directory) is not writable")
        }
    }

    /// The files a run leaves: the store, its WAL and shared memory, and the snapshot.
    var files: [String] { [store, store + "-wal", store + "-shm", snapshot] }

    /// Deletes the previous run's files so that the run starts cold — only if the store there is
    /// the demo's own (a Strata store of exactly the demo's entities), never anything else.
    func clear() throws {
        let manager = FileManager.default
        if manager.fileExists(atPath: store) {
            let names: [String]
            do {
                names = try StoreInspector(path: store).entities.map(\.name).sorted()
            } catch let error as StrataError {
                throw CLIFailure.badInput("\(store) exists and is not a demo store (\(error.message)); "
                                          + "refusing to replace it — pass another --path")
            }
            guard names == [Article.entityName, Feed.entityName] else {
                throw CLIFailure.badInput("\(store) is a Strata store but not the demo's (entities: "
                                          + "\(names.joined(separator: ", "))); refusing to replace it — pass another --path")
            }
        } else if manager.fileExists(atPath: snapshot) {
            guard (try? Snapshot.readHeader(at: snapshot)) != nil else {
                throw CLIFailure.badInput("\(snapshot) exists and is not a snapshot; refusing to replace it")
            }
        }
        for file in files where manager.fileExists(atPath: file) {
            do {
                try manager.removeItem(atPath: file)
            } catch {
                throw CLIFailure.badInput("cannot remove the previous run's \(file): \(error.localizedDescription)")
            }
        }
    }
}
