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

    /// How a looping scene whose script returns before its period's end
    /// is made to end there: from `from`, a `wait(seconds)`, in place of
    /// the `untilStill()` that ended the script (`replacing`) or added
    /// after the script (nil).
    public struct PeriodWait: Sendable, Equatable {
        public var from: Double
        public var seconds: Double
        public var replacing: StillWait?
        /// The time the script then ends at.
        public var end: Double { from + seconds }
    }

    /// The wait that makes a looping scene's script, which returned at
    /// `scriptEnd` after the `untilStill` calls `waits`, end at `period`
    /// (the clip the animator watched when the loop was switched on), so
    /// that the loop is that clip: the last `untilStill()` of the scene
    /// waits up to it when the script returned with it, else a `wait` is
    /// added. Whole milliseconds rounded down, so the clip has the
    /// period's frames and never one more. nil when the script reaches
    /// the period itself.
    public static func periodWait(period: Double, scriptEnd: Double, waits: [StillWait]) -> PeriodWait? {
        let last = waits.last.flatMap { w in w.file == nil && abs(w.end - scriptEnd) <= 1e-9 ? w : nil }
        let from = last?.start ?? scriptEnd
        // (A period of 9.2 s reads 9199.999… ms: 1e-7 ms of slack, far
        // inside the 1e-9 s the frame rule allows.)
        let seconds = ((period - from) * 1000 + 1e-7).rounded(.down) / 1000
        guard seconds.isFinite, from + seconds > scriptEnd + 1e-9 else { return nil }
        return PeriodWait(from: from, seconds: seconds, replacing: last)
    }

    /// The text with `loop()` switched `on` (a line before the first
    /// top-level `prepare`/`wait`/`untilStill`, the `untilStill` statements
    /// of `waits` turned into their waits, `period` the wait that makes
    /// the script end at the loop's period) or off (its lines taken out).
    /// `name` names the scene in problems.
    public static func switched(_ text: [UInt8], on: Bool, waits: [StillWait], period: PeriodWait? = nil, name: String) throws -> [UInt8] {
        let t = LuaTokenizer.tokens(text)
        var replacements: [(Range<Int>, String)] = []
        if on {
            guard !callsLoop(text) else { return text }
            // The wait added after the script (up to the period's end), if any.
            var tail = ""
            if let period, period.replacing == nil {
                tail = "wait(\(LuaLiteral.number(period.seconds, decimals: 3)))\n"
                if let last = lines(t).last, t[last.tokens.lowerBound].is("return", text) {
                    throw Problem(message: "\(name):\(last.line): the scene returns before the loop's end (\(LuaLiteral.number(period.end, decimals: 3)) s): put \(tail.dropLast()) before it in a text editor")
                }
            }
            let sep = text.last.map { $0 == 10 ? "" : "\n" } ?? ""
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
                let seconds = period.flatMap { $0.replacing == w ? $0.seconds : nil } ?? max(0, w.end - w.start)
                replacements.append((t[k].start..<t[r.upperBound - 1].end, "wait(\(LuaLiteral.number(seconds, decimals: 3)))"))
            }
            let at = SketchSource.firstTopLevelStep(t, text)
            if let at {
                var i = at
                while i < text.count, text[i] == 32 || text[i] == 9 { i += 1 }
                replacements.append((at..<at, String(decoding: text[at..<i], as: UTF8.self) + "loop()\n"))
                if !tail.isEmpty { replacements.append((text.count..<text.count, sep + tail)) }
            } else {
                replacements.append((text.count..<text.count, sep + "loop()\n" + tail))
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
