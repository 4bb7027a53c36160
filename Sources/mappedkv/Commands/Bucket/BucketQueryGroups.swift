import ArgumentParser

// How `bucket query` tells its --or groups apart. The argument parser gives the --where words in
// order but not where each --or stood among them, so the groups are read from the command line's
// words; the invariant is that they hold exactly the words the parser gave, in its order, or the
// command stops with an error rather than run a query the user did not write.

enum BucketQueryGroups {
    /// The --where words of each group, from `arguments` (the words after the program's name).
    /// `parsed` is what the parser gave --where; the groups, joined, must be those words.
    static func split(_ arguments: [String], parsed: [String]) throws -> [[String]] {
        var groups: [[String]] = [[]]
        var collecting = false
        var sawOr = false
        for word in arguments {
            if word == "--" { break }
            if word == "--where" {
                collecting = true
                continue
            }
            if word == "--or" {
                guard !groups[groups.count - 1].isEmpty else {
                    throw ValidationError("--or must come between groups of --where NAME OP VALUE")
                }
                groups.append([])
                collecting = false
                sawOr = true
                continue
            }
            if looksLikeOption(word) {
                collecting = false
            } else if collecting {
                groups[groups.count - 1].append(word)
            }
        }
        if sawOr, groups[groups.count - 1].isEmpty {
            throw ValidationError("--or needs a group of --where NAME OP VALUE after it")
        }
        guard Array(groups.joined()) == parsed else {
            throw ValidationError(
                "could not tell which --where belong to which --or group; write --where NAME OP VALUE")
        }
        for group in groups where group.count % 3 != 0 {
            throw ValidationError("--where takes NAME OP VALUE")
        }
        return groups
    }

    /// Whether the parser reads `word` as an option name (ending a list of --where words): a dash
    /// and then anything but a digit or a point (`-5` and `-.5` are values).
    private static func looksLikeOption(_ word: String) -> Bool {
        guard word.hasPrefix("-"), word.count > 1 else { return false }
        let next = word[word.index(after: word.startIndex)]
        return !(next.isNumber || next == ".")
    }
}
