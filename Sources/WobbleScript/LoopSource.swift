/// Switching a scene's `loop()` on or off in its text (the studio's `L`):
/// `loop()` is written as its own line before the scene's first clock step
/// and taken out again as that line; every other byte stays. A loop never
/// comes to rest, so switching it on also turns each `untilStill(...)`
/// statement of the scene into the `wait(seconds)` it made.
public enum LoopSource {
    public struct Problem: Error, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// The lines of the text that are a `loop()` call and nothing else.
    public static func loopLines(_ text: [UInt8]) -> [Int] {
        let t = LuaTokenizer.tokens(text)
        return lines(t).compactMap { line, r in
            r.count == 3 && t[r.lowerBound].is("loop", text) && t[r.lowerBound + 1].is("(", text) && t[r.lowerBound + 2].is(")", text)
                ? line : nil
        }
    }

    /// Whether the text calls `loop` anywhere (its own line or not).
    public static func callsLoop(_ text: [UInt8]) -> Bool {
        let t = LuaTokenizer.tokens(text)
        return t.indices.contains { i in
            t[i].kind == .name && t[i].is("loop", text) && i + 1 < t.count && t[i + 1].is("(", text)
                && !(i > 0 && (t[i - 1].is(".", text) || t[i - 1].is(":", text)))
        }
    }

    /// The text with `loop()` switched `on` (a line before the first
    /// top-level `prepare`/`wait`/`untilStill`, the `untilStill` statements
    /// of `waits` turned into their waits) or off (its lines taken out).
    /// `name` names the scene in problems.
    public static func switched(_ text: [UInt8], on: Bool, waits: [StillWait], name: String) throws -> [UInt8] {
        let t = LuaTokenizer.tokens(text)
        var replacements: [(Range<Int>, String)] = []
        if on {
            guard !callsLoop(text) else { return text }
            for w in waits where w.file == nil {
                guard let line = w.line, let r = lines(t).first(where: { $0.line == line })?.tokens else {
                    throw Problem(message: "\(name): an untilStill() of the scene has no line: replace it with wait(seconds) in a text editor")
                }
                // `untilStill()` or `untilStill(number)` alone on its line.
                let k = r.lowerBound
                let alone = (r.count == 3 || (r.count == 4 && t[k + 2].kind == .number))
                    && t[k].is("untilStill", text) && t[k + 1].is("(", text) && t[r.upperBound - 1].is(")", text)
                guard alone else {
                    throw Problem(message: "\(name):\(line): untilStill() never returns in a loop and is part of a longer statement: replace it with wait(seconds) in a text editor")
                }
                let seconds = max(0, w.end - w.start)
                replacements.append((t[k].start..<t[r.upperBound - 1].end, "wait(\(LuaLiteral.number(seconds, decimals: 3)))"))
            }
            let at = SketchSource.firstTopLevelStep(t, text)
            if let at {
                var i = at
                while i < text.count, text[i] == 32 || text[i] == 9 { i += 1 }
                replacements.append((at..<at, String(decoding: text[at..<i], as: UTF8.self) + "loop()\n"))
            } else {
                let sep = text.last.map { $0 == 10 ? "" : "\n" } ?? ""
                replacements.append((text.count..<text.count, sep + "loop()\n"))
            }
        } else {
            let own = loopLines(text)
            let all = t.indices.filter { i in
                t[i].kind == .name && t[i].is("loop", text) && i + 1 < t.count && t[i + 1].is("(", text)
                    && !(i > 0 && (t[i - 1].is(".", text) || t[i - 1].is(":", text)))
            }
            if let stray = all.first(where: { !own.contains(t[$0].line) }) {
                throw Problem(message: "\(name):\(t[stray].line): loop() is part of a longer statement: take it out in a text editor")
            }
            for line in own {
                guard let r = lines(t).first(where: { $0.line == line })?.tokens else { continue }
                replacements.append((TimelineSource.wholeLine(t, r, text), ""))
            }
        }
        var out = text
        for (r, s) in replacements.sorted(by: { $0.0.lowerBound > $1.0.lowerBound }) {
            out.replaceSubrange(r, with: Array(s.utf8))
        }
        return out
    }

    /// Each line's text by 1-based line number.
    public static func lineTexts(_ text: [UInt8]) -> [Int: [UInt8]] {
        var out: [Int: [UInt8]] = [:]
        for (i, l) in text.split(separator: 10, omittingEmptySubsequences: false).enumerated() { out[i + 1] = Array(l) }
        return out
    }

    /// The tokens of each line (by index range), lines in order.
    static func lines(_ t: [LuaToken]) -> [(line: Int, tokens: Range<Int>)] {
        var out: [(line: Int, tokens: Range<Int>)] = []
        var i = 0
        while i < t.count {
            var j = i
            while j < t.count, t[j].line == t[i].line { j += 1 }
            out.append((t[i].line, i..<j))
            i = j
        }
        return out
    }
}
