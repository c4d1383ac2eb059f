import Strata

extension DemoRunner {
    /// 3. The sync API reports articles read on another device: one bulk update at the root,
    /// without loading them; the main context, its live list and the counts are patched.
    func readElsewhere() async throws {
        var random = SplitMix64(seed: options.seed ^ 0x5EAD_E15E)
        let chosen = Array(try counts.unreadIDs.shuffled(using: &random).prefix(options.readElsewhere))
        heading(3, "Sync API: \(Format.count(chosen.count, "article")) \(chosen.count == 1 ? "was" : "were") read elsewhere")
        let unreadBefore = counts.unread
        let topBefore = unreadList.ids
        let start = clock.now
        let submission = try await main.updateAll(Article.self, ids: chosen, set: ["isRead": true])
        let patched = clock.now - start
        try await submission.committed()
        let committed = clock.now - start
        let changedRows = Set(unreadList.ids).subtracting(topBefore).count
        say("   one bulk update of \(Format.count(chosen.count, "row")): main context patched in \(Format.duration(patched)), "
            + "committed in \(Format.duration(committed))")
        say("   unread \(Format.count(unreadBefore)) → \(Format.count(counts.unread)); "
            + "\(changedRows) of the top \(Format.count(unreadList.ids.count, "row")) of the live list changed")
        record(3, "bulk mark read", committed.seconds, [("rows", .int(chosen.count)), ("patchedSeconds", .number(patched.seconds))])
    }
}
