/// The words the demo's generated feeds and articles are made of.
enum Vocabulary {
    static let feedAdjectives = ["Daily", "Weekly", "Open", "Modern", "Practical", "Curious", "Quiet", "Deep", "Tiny",
                                 "Swift", "Offline", "Native"]
    static let feedNouns = ["Notes", "Digest", "Journal", "Dispatch", "Review", "Log", "Chronicle", "Bulletin",
                            "Letters", "Field Guide"]
    static let categories = ["Programming", "Databases", "Mobile", "Linux", "Design", "Science", "Security"]
    static let openers = ["why", "how", "inside", "notes on", "a tour of", "rethinking", "measuring", "debugging",
                          "shipping", "understanding", "the case for", "lessons from"]
    static let words = [
        "swift", "concurrency", "actors", "tasks", "sqlite", "snapshots", "indexes", "queries", "linux", "servers",
        "offline", "sync", "threads", "queues", "memory", "latency", "caching", "storage", "compression", "lz4",
        "transactions", "journals", "pages", "merges", "conflicts", "contexts", "objects", "graphs", "layouts",
        "screens", "launches", "profiles", "benchmarks", "tests", "builds", "packages", "modules", "compilers",
        "generics", "protocols", "values", "references", "ownership", "borrowing", "macros", "observation",
        "networks", "feeds", "articles", "readers", "search", "tokens", "ranking", "unicode", "strings", "dates",
        "clocks", "timers", "files", "disks", "durability", "crashes", "recovery", "migrations", "schemas",
        "columns", "rows", "tables", "triggers", "logs", "generations", "devices", "batteries", "energy", "users",
        "teams", "releases", "patterns", "pitfalls", "tradeoffs", "internals", "design", "performance", "safety",
        "the", "of", "and", "with", "for", "without", "under", "between", "across", "fast", "small", "careful",
        "concurrent", "reliable", "quiet", "modern", "practical", "hidden", "simple", "robust",
    ]
}
