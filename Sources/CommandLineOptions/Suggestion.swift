/// The "did you mean" of a usage error: the one known word a mistyped word is close to.
enum Suggestion {
    /// The word nearest to `word` when it is near enough to be a slip (a third of its letters, at
    /// least one, are wrong, missing or extra) or the only word that starts with it; else nil.
    static func closest(to word: String, among candidates: [String]) -> String? {
        let typed = Array(word)
        let scored = candidates.map { ($0, distance(typed, Array($0))) }
        if let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= max(1, typed.count / 3) {
            return best.0
        }
        let extending = candidates.filter { !word.isEmpty && $0.hasPrefix(word) }
        return extending.count == 1 ? extending[0] : nil
    }

    /// "a", "a and b", "a, b and c".
    static func list(_ words: [String]) -> String {
        guard let last = words.last else { return "" }
        return words.count == 1 ? last : words.dropLast().joined(separator: ", ") + " and " + last
    }

    /// The fewest letters put in, taken out, changed or swapped with their neighbour to turn `a`
    /// into `b` (Damerau–Levenshtein, each letter edited once: "sned" is one from "send").
    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        // d[i][j]: the distance between the first i letters of a and the first j of b.
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let change = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + change)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[a.count][b.count]
    }
}
