import WobbleCore

/// The scene's timeline in its text, as the studio edits it: the
/// `perform{...}` block a take is baked into, and `touch`/`impulse`/`shake`
/// statements deleted from the timeline. Every other byte stays.
public enum TimelineSource {
    public struct Problem: Error, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// Whether line `line` of the text is one `touch(...)`, `impulse(...)`
    /// or `shake(...)` statement and nothing else (its arguments names and
    /// numbers): what the studio may delete.
    public static func isKickStatement(_ text: [UInt8], line: Int) -> Bool {
        let t = LuaTokenizer.tokens(text)
        guard let r = LoopSource.lines(t).first(where: { $0.line == line })?.tokens else { return false }
        return kickStatement(t, r, text)
    }

    static func kickStatement(_ t: [LuaToken], _ r: Range<Int>, _ text: [UInt8]) -> Bool {
        guard r.count >= 3, ["touch", "impulse", "shake"].contains(where: { t[r.lowerBound].is($0, text) }),
              t[r.lowerBound + 1].is("(", text), t[r.upperBound - 1].is(")", text) else { return false }
        // Only names, numbers, commas and minus signs inside.
        for k in (r.lowerBound + 2)..<(r.upperBound - 1) {
            let tok = t[k]
            guard tok.kind == .name || tok.kind == .number || tok.is(",", text) || tok.is("-", text) else { return false }
        }
        return true
    }

    /// The text with the whole lines `lines` taken out, each of which must
    /// be a kick statement alone (`isKickStatement`).
    public static func removingKicks(_ text: [UInt8], lines: Set<Int>, name: String) throws -> [UInt8] {
        guard !lines.isEmpty else { return text }
        let t = LuaTokenizer.tokens(text)
        let byLine = LoopSource.lines(t)
        var cuts: [Range<Int>] = []
        for line in lines.sorted() {
            guard let r = byLine.first(where: { $0.line == line })?.tokens, kickStatement(t, r, text) else {
                throw Problem(message: "\(name):\(line): the kick deleted on the timeline is not alone on its line any more (changed on disk?): delete it in a text editor")
            }
            cuts.append(wholeLine(t, r, text))
        }
        var out = text
        for c in cuts.sorted(by: { $0.lowerBound > $1.lowerBound }) { out.removeSubrange(c) }
        return out
    }

    /// From the start of the line of `r`'s first token to after the
    /// newline of its last.
    static func wholeLine(_ t: [LuaToken], _ r: Range<Int>, _ text: [UInt8]) -> Range<Int> {
        var s = t[r.lowerBound].start
        while s > 0, text[s - 1] != 10 { s -= 1 }
        var e = t[r.upperBound - 1].end
        while e < text.count, text[e] != 10 { e += 1 }
        if e < text.count { e += 1 }
        return s..<e
    }

    /// The `perform{...}` statements of the text: the span of each whole
    /// statement's lines (the comment lines right above included) and of
    /// its constructor.
    static func performBlocks(_ t: [LuaToken], _ text: [UInt8]) -> [(lines: Range<Int>, constructor: Range<Int>)] {
        var out: [(lines: Range<Int>, constructor: Range<Int>)] = []
        for i in t.indices where t[i].kind == .name && t[i].is("perform", text) && i + 1 < t.count && t[i + 1].is("{", text) {
            if i > 0, t[i - 1].is(".", text) || t[i - 1].is(":", text) { continue }
            let close = SketchSource.matching(t, i + 1, open: "{", close: "}", text)
            guard close < t.count else { continue }
            let lines = wholeLine(t, i..<(close + 1), text)
            let above = SketchSource.commentAbove(t[i].start, t, text)
            out.append((min(lines.lowerBound, above)..<lines.upperBound, t[i + 1].start..<t[close].end))
        }
        return out
    }

    /// The block the studio writes for `events` (times to the millisecond,
    /// pixels to a tenth, g to a thousandth).
    public static func block(_ events: [PerformedEvent], indent: String = "") -> String {
        var out = indent + "-- Pokes and shakes baked from a take in `wobble-run edit` (B), at their\n"
        out += indent + "-- times in the clip (seconds): edit, move or delete them freely.\n"
        out += indent + "perform" + constructor(events, indent: indent) + "\n"
        return out
    }

    static func constructor(_ events: [PerformedEvent], indent: String) -> String {
        var out = "{\n"
        for e in events {
            let t = LuaLiteral.number(e.time, decimals: 3)
            switch e.action {
            case .touch(let p, let q):
                out += indent + "  {\(t), touch = {\([p.x, p.y, q.x, q.y].map { LuaLiteral.number($0, decimals: 1) }.joined(separator: ", "))}},\n"
            case .shake(let ax, let ay):
                out += indent + "  {\(t), shake = {\(LuaLiteral.number(ax, decimals: 3)), \(LuaLiteral.number(ay, decimals: 3))}},\n"
            }
        }
        return out + indent + "}"
    }

    /// The text with its `perform{...}` block set to `events`: the one
    /// block's list replaced (the block taken out when `events` is empty),
    /// or a new block before the scene's first top-level clock step.
    public static func withPerform(_ text: [UInt8], _ events: [PerformedEvent], name: String) throws -> [UInt8] {
        let t = LuaTokenizer.tokens(text)
        let blocks = performBlocks(t, text)
        guard blocks.count <= 1 else {
            throw Problem(message: "\(name): the scene calls perform{...} \(blocks.count) times: bake into it in a text editor")
        }
        var out = text
        if let b = blocks.first {
            if events.isEmpty {
                out.removeSubrange(b.lines)
            } else {
                // The block's indentation, for the new list's lines.
                var i = b.constructor.lowerBound
                while i > 0, text[i - 1] != 10 { i -= 1 }
                var j = i
                while j < text.count, text[j] == 32 || text[j] == 9 { j += 1 }
                out.replaceSubrange(b.constructor, with: Array(constructor(events, indent: String(decoding: text[i..<j], as: UTF8.self)).utf8))
            }
            return out
        }
        guard !events.isEmpty else { return text }
        if let at = SketchSource.firstTopLevelStep(t, text) {
            var i = at
            while i < text.count, text[i] == 32 || text[i] == 9 { i += 1 }
            out.insert(contentsOf: Array(block(events, indent: String(decoding: text[at..<i], as: UTF8.self)).utf8), at: at)
        } else {
            let sep = text.last.map { $0 == 10 ? "" : "\n" } ?? ""
            out += Array((sep + block(events)).utf8)
        }
        return out
    }
}
