import ArgumentParser

/// What the demo's options must leave for every step to show something. Step 3 marks
/// `--read-elsewhere` unread articles read; step 4 then needs two unread articles (some to star,
/// one for the conflict). How many arrive unread depends on the seed, so they are counted.
enum StepRequirements {
    /// Unread articles the merge conflict (step 4) needs after step 3.
    static let conflictArticles = 2

    /// The default `--read-elsewhere`: a tenth of the articles (10,000 of the default 100,000).
    static func defaultReadElsewhere(articles: Int) -> Int { max(1, articles / 10) }

    /// Refuses options with which a step could not show anything, saying which and what to change.
    static func check(_ generator: DataGenerator, readElsewhere: Int) throws {
        let unread = generator.unreadOnArrival
        let arrive = "with --articles \(generator.articleCount) and --seed \(generator.seed), "
            + "\(Format.count(unread)) \(unread == 1 ? "article arrives" : "articles arrive") unread"
        guard unread >= 1 + conflictArticles else {
            throw ValidationError("too few articles for the demo: \(arrive), and it needs \(1 + conflictArticles) "
                                  + "(1 to be read elsewhere in step 3, \(conflictArticles) for the merge conflict in "
                                  + "step 4); use more --articles")
        }
        guard readElsewhere <= unread - conflictArticles else {
            throw ValidationError("--read-elsewhere \(readElsewhere) would leave too few unread articles for the merge "
                                  + "conflict in step 4: \(arrive), and the conflict needs \(conflictArticles); "
                                  + "use --read-elsewhere \(unread - conflictArticles) or less")
        }
    }
}
