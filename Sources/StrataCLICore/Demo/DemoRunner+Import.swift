import Strata

extension DemoRunner {
    /// 2. Sync import: worker contexts import the feeds and the articles in batches, newest first
    /// (as a sync API pages), while the main context's live list and counts follow every save.
    func syncImport() async throws {
        let workerCount = options.workers, batchSize = options.batchSize
        heading(2, "Sync import — \(Format.count(workerCount, "worker context")), batches of "
                + Format.count(batchSize, "article"))
        let start = clock.now
        let progress = ProgressLine(console: console, total: options.articles, unit: "articles", enabled: !options.json)
        counts.onUpdate = { [unowned self] in
            progress.update(counts.articles, "unread \(Format.count(counts.unread))  live list updated \(counts.notifications)×")
        }
        let generator = self.generator
        let total = options.articles
        // Newest first: batch 0 holds the newest articles.
        let batches = stride(from: total, to: 0, by: -batchSize).map { max(0, $0 - batchSize)..<$0 }
        let workers = (0..<workerCount).map { store.makeWorkerContext(name: "sync-\($0 + 1)") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, worker) in workers.enumerated() {
                let feeds = stride(from: index, to: options.feeds, by: workerCount).map { generator.feed($0) }
                let mine = stride(from: index, to: batches.count, by: workerCount).map { batches[$0] }
                group.addTask {
                    try await worker.perform { worker in
                        for feed in feeds { try worker.insert(feed) }
                        try worker.save()
                    }
                    for range in mine {
                        let articles = range.map { generator.article($0) }
                        try await worker.perform { worker in
                            for article in articles { try worker.insert(article) }
                            try worker.save()
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        logger.debug("workers submitted every batch", metadata: ["seconds": "\((clock.now - start).seconds)",
                                                                 "merged": "\(counts.articles)"])
        try await store.persist()
        logger.debug("committed", metadata: ["seconds": "\((clock.now - start).seconds)", "merged": "\(counts.articles)"])
        try await untilMerged { $0.counts.articles >= total }
        logger.debug("merged into the main context", metadata: ["seconds": "\((clock.now - start).seconds)"])
        counts.onUpdate = nil
        let elapsed = (clock.now - start).seconds
        progress.finish(counts.articles, "unread \(Format.count(counts.unread))  live list updated \(counts.notifications)×")
        say("   imported \(Format.count(options.feeds, "feed")) and \(Format.count(counts.articles, "article")) in "
            + "\(Format.seconds(elapsed)) (\(Format.count(Int(Double(counts.articles) / max(elapsed, 0.001)))) articles/s), "
            + "committed to SQLite")
        let busiest = counts.unreadByFeed.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.prefix(3)
        say("   unread by feed: " + busiest.map { feedID, unread in
            "\(main.object(Feed.self, id: feedID)?.title ?? "feed \(feedID)"): \(Format.count(unread))"
        }.joined(separator: " · ") + " (\(Format.count(counts.unreadByFeed.values.filter { $0 > 0 }.count, "feed")) with unread)")
        if let top = unreadList.values.first {
            say("   top of the list: \"\(top.title)\" — \(ValueFormatter.iso8601(top.published.timeIntervalSinceReferenceDate))")
        }
        record(2, "sync import", elapsed, [("workers", .int(workerCount)), ("batches", .int(batches.count)),
                                           ("liveUpdates", .int(counts.notifications))])
    }

    /// Waits until `condition` holds, checking after every change merged into the main context.
    func untilMerged(_ condition: (DemoRunner) -> Bool) async throws {
        if condition(self) { return }
        for await _ in main.changes() {
            if condition(self) { return }
        }
    }
}
