internal import CLua
internal import CWobbleLuaShim
import Foundation
import WobbleCore

/// The `addSketch` calls of a scene's text, found by a small Lua scanner
/// (comments, strings, long brackets, nested braces), and the rewriting of
/// their constructors: what the studio saves with `Ctrl+S`.
///
/// The scanner never fails: text it cannot follow (an unterminated string
/// or comment) ends the scan, and the calls after it are not found (their
/// sketches are drawn locked).
public struct SketchSource {
    /// One call `addSketch(...)` / `addSketch{...}` of the global.
    public struct Call: Sendable, Equatable {
        /// 1-based line of the name `addSketch`.
        public var line: Int
        /// The argument's text: `(...)`, or the constructor `{...}`.
        public var argumentSpan: Range<Int>
        public var argument: Argument
    }

    public enum Argument: Sendable, Equatable {
        /// `addSketch()`: the default sketch.
        case absent
        /// A table constructor whose fields are all `name = literal`.
        case table(Constructor)
        /// Anything else (variables, expressions, a string): not editable.
        case computed
    }

    public struct Constructor: Sendable, Equatable {
        /// `{` to `}` inclusive.
        public var span: Range<Int>
        public var fields: [Field]

        public func field(_ key: String) -> Field? { fields.first { $0.key == key } }
    }

    public struct Field: Sendable, Equatable {
        public var key: String
        /// The whole field, key to the end of its value.
        public var span: Range<Int>
        public var value: Value
    }

    public enum Value: Sendable, Equatable {
        case number(Double, Range<Int>)
        /// `{x, y}` or `{x = .., y = ..}`: both numbers and their spans.
        case point(Double, Range<Int>, Double, Range<Int>)
        /// A string, `true`, `false` or `nil`.
        case other
    }

    public let text: [UInt8]
    public let calls: [Call]
    /// Where added sketches go: the start of the line of the first
    /// top-level `prepare(...)`, nil when there is none (the end).
    public let insertionPoint: Int?
    private let byLine: [Int: [Int]]

    public init(text: [UInt8]) {
        self.text = text
        let tokens = LuaTokenizer.tokens(text)
        calls = SketchSource.findCalls(tokens, text)
        var index: [Int: [Int]] = [:]
        for (i, c) in calls.enumerated() { index[c.line, default: []].append(i) }
        byLine = index
        insertionPoint = SketchSource.firstTopLevelPrepare(tokens, text)
    }

    /// The calls on `line`, in order.
    public func calls(onLine line: Int) -> [Call] { (byLine[line] ?? []).map { calls[$0] } }

    // MARK: Editability

    /// Why the call cannot be edited by the studio, nil when it can: its
    /// argument is absent or a constructor of number literals in one of the
    /// two forms (other literal keys allowed).
    public static func problem(_ call: Call) -> String? {
        switch call.argument {
        case .absent: return nil
        case .computed: return "computed"
        case .table(let c):
            let corners = ["lt", "rt", "rb", "lb"], rect = ["x", "y", "w", "h"]
            for f in c.fields {
                switch f.key {
                case _ where corners.contains(f.key) || f.key == "center":
                    guard case .point = f.value else { return "computed" }
                case _ where rect.contains(f.key):
                    guard case .number = f.value else { return "computed" }
                default:
                    break
                }
            }
            let hasCorners = corners.filter { c.field($0) != nil }.count, hasRect = rect.filter { c.field($0) != nil }.count
            if (hasCorners != 0 && hasCorners != 4) || (hasRect != 0 && hasRect != 4) || (hasCorners != 0 && hasRect != 0) {
                return "computed"
            }
            return nil
        }
    }

    // MARK: Rewriting

    /// An error of a rewrite (the text cannot take the edit).
    public struct RewriteError: Error, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// The text with the constructors of `edits` (call → new points, the
    /// call's own points beside) rewritten and `added` sketches inserted as
    /// their own lines; every other byte stays.
    public func rewritten(edits: [(call: Call, old: SketchPoints, new: SketchPoints)], added: [SketchPoints]) throws -> [UInt8] {
        var replacements: [(Range<Int>, String)] = []
        for e in edits {
            replacements += try SketchSource.replacements(e.call, old: e.old, new: e.new, text: text)
        }
        if !added.isEmpty {
            let lines = added.map { "addSketch" + SketchSource.cornerConstructor($0) + "\n" }.joined()
            if let at = insertionPoint {
                // The prepare line's indentation, for each added line.
                var i = at
                while i < text.count, text[i] == 32 || text[i] == 9 { i += 1 }
                let indent = String(decoding: text[at..<i], as: UTF8.self)
                replacements.append((at..<at, lines.split(separator: "\n").map { indent + $0 + "\n" }.joined()))
            } else {
                let sep = text.last.map { $0 == 10 ? "" : "\n" } ?? ""
                replacements.append((text.count..<text.count, sep + lines))
            }
        }
        replacements.sort { $0.0.lowerBound < $1.0.lowerBound || ($0.0.lowerBound == $1.0.lowerBound && $0.0.upperBound < $1.0.upperBound) }
        var out: [UInt8] = []
        out.reserveCapacity(text.count + 256)
        var at = 0
        for (r, s) in replacements {
            guard r.lowerBound >= at, r.upperBound <= text.count else {
                throw RewriteError(message: "two edits overlap in the scene's text")
            }
            out += text[at..<r.lowerBound]
            out += Array(s.utf8)
            at = r.upperBound
        }
        out += text[at...]
        return out
    }

    /// A coordinate as written: at most one decimal.
    public static func format(_ v: Double) -> String {
        let r = (v * 10).rounded() / 10
        guard r.isFinite else { return "0" }
        if r == r.rounded(), abs(r) < 1e15 {
            let i = Int(r)
            return String(i == 0 ? 0 : i)
        }
        return String(format: "%.1f", r)
    }

    static func formatPoint(_ p: Point) -> String { "{\(format(p.x)), \(format(p.y))}" }

    /// `{lt = {..}, rt = {..}, rb = {..}, lb = {..}[, center = {..}]}`.
    public static func cornerConstructor(_ p: SketchPoints) -> String {
        "{" + cornerFields(p) + (p.center.map { ", center = \(formatPoint($0))" } ?? "") + "}"
    }

    static func cornerFields(_ p: SketchPoints) -> String {
        "lt = \(formatPoint(p.lt)), rt = \(formatPoint(p.rt)), rb = \(formatPoint(p.rb)), lb = \(formatPoint(p.lb))"
    }

    /// True when the two numbers are written the same (no edit needed).
    static func same(_ a: Double, _ b: Double) -> Bool { format(a) == format(b) && abs(a - b) < 0.05 + 1e-9 }

    /// The byte edits that turn `call`'s argument into `new`.
    static func replacements(_ call: Call, old: SketchPoints, new: SketchPoints, text: [UInt8]) throws -> [(Range<Int>, String)] {
        if let p = problem(call) { throw RewriteError(message: "line \(call.line): this sketch is \(p)") }
        switch call.argument {
        case .computed:
            throw RewriteError(message: "line \(call.line): this sketch is computed")
        case .absent:
            return [(call.argumentSpan, cornerConstructor(new))]
        case .table(let c):
            var out: [(Range<Int>, String)] = []
            func number(_ v: Value, _ x: Double, _ y: Double?) {
                switch v {
                case .number(let a, let r): if !same(a, x) { out.append((r, format(x))) }
                case .point(let a, let ra, let b, let rb):
                    if !same(a, x) { out.append((ra, format(x))) }
                    if let y, !same(b, y) { out.append((rb, format(y))) }
                case .other: break
                }
            }
            // The center: kept where it is, or added when it was set.
            var centerText: String?
            if let center = new.center {
                if let f = c.field("center") {
                    number(f.value, center.x, center.y)
                } else {
                    centerText = "center = \(formatPoint(center))"
                }
            }
            let corners = ["lt", "rt", "rb", "lb"]
            let points = [new.lt, new.rt, new.rb, new.lb]
            if c.field("lt") != nil {
                for (k, p) in zip(corners, points) { if let f = c.field(k) { number(f.value, p.x, p.y) } }
            } else if let fx = c.field("x"), let fy = c.field("y"), let fw = c.field("w"), let fh = c.field("h") {
                let w = new.rt.x - new.lt.x, h = new.lb.y - new.lt.y
                let rect = same(new.lt.y, new.rt.y) && same(new.lb.y, new.rb.y) && same(new.lt.x, new.lb.x)
                    && same(new.rt.x, new.rb.x) && w >= 0 && h >= 0
                if rect {
                    number(fx.value, new.lt.x, nil)
                    number(fy.value, new.lt.y, nil)
                    number(fw.value, w, nil)
                    number(fh.value, h, nil)
                } else {
                    // The corner form in the place of the first of x, y, w, h;
                    // the other three removed with their separators.
                    let rectFields = c.fields.enumerated().filter { ["x", "y", "w", "h"].contains($0.element.key) }
                    guard let first = rectFields.first else { return out }
                    out.append((first.element.span, cornerFields(new)))
                    var removed: [Range<Int>] = []
                    let removedIndices = Set(rectFields.dropFirst().map(\.offset))
                    for (i, f) in rectFields.dropFirst() {
                        if i + 1 < c.fields.count {
                            removed.append(f.span.lowerBound..<c.fields[i + 1].span.lowerBound)
                        } else {
                            var k = i - 1
                            while k > 0, removedIndices.contains(k) { k -= 1 }
                            removed.append(c.fields[k].span.upperBound..<f.span.upperBound)
                        }
                    }
                    removed.sort { $0.lowerBound < $1.lowerBound }
                    var merged: [Range<Int>] = []
                    for r in removed {
                        if let last = merged.last, r.lowerBound <= last.upperBound {
                            merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, r.upperBound)
                        } else {
                            merged.append(r)
                        }
                    }
                    // A removal may not cut into the replaced first field.
                    merged = merged.map { max($0.lowerBound, first.element.span.upperBound)..<$0.upperBound }
                    out += merged.filter { !$0.isEmpty }.map { ($0, "") }
                }
            } else {
                // No shape keys: the default sketch; the corners go first.
                let at = c.span.lowerBound + 1
                out.append((at..<at, cornerFields(new) + (c.fields.isEmpty && centerText == nil ? "" : ", ")))
            }
            if let centerText {
                if let last = c.fields.last {
                    out.append((last.span.upperBound..<last.span.upperBound, ", " + centerText))
                } else {
                    let at = c.span.upperBound - 1
                    out.append((at..<at, centerText))
                }
            }
            return out
        }
    }

    // MARK: Scanning

    static func findCalls(_ t: [LuaToken], _ text: [UInt8]) -> [Call] {
        var calls: [Call] = []
        for i in t.indices where t[i].kind == .name && t[i].is("addSketch", text) {
            if i > 0 {
                let p = t[i - 1]
                if p.kind == .punct && (p.is(".", text) || p.is(":", text) || p.is("::", text)) { continue }
                if p.kind == .name && (p.is("local", text) || p.is("function", text) || p.is("goto", text)) { continue }
            }
            guard i + 1 < t.count else { continue }
            let n = t[i + 1]
            if n.kind == .punct && n.is("{", text) {
                let (c, end) = constructor(t, i + 1, text)
                let span = n.start..<(end < t.count ? t[end].end : text.count)
                calls.append(Call(line: t[i].line, argumentSpan: span, argument: c.map { .table($0) } ?? .computed))
            } else if n.kind == .punct && n.is("(", text) {
                let close = matching(t, i + 1, open: "(", close: ")", text)
                let span = n.start..<(close < t.count ? t[close].end : text.count)
                var argument = Argument.computed
                if i + 2 < t.count, t[i + 2].is(")", text) {
                    argument = .absent
                } else if i + 2 < t.count, t[i + 2].is("{", text) {
                    let (c, end) = constructor(t, i + 2, text)
                    if let c, end + 1 < t.count, t[end + 1].is(")", text) { argument = .table(c) }
                }
                calls.append(Call(line: t[i].line, argumentSpan: span, argument: argument))
            } else if n.kind == .string {
                calls.append(Call(line: t[i].line, argumentSpan: n.start..<n.end, argument: .computed))
            }
        }
        return calls
    }

    /// The index of the token closing the bracket opened at `i` (t.count when unclosed).
    static func matching(_ t: [LuaToken], _ i: Int, open: String, close: String, _ text: [UInt8]) -> Int {
        var depth = 0
        var k = i
        while k < t.count {
            if t[k].kind == .punct {
                if t[k].is(open, text) { depth += 1 } else if t[k].is(close, text) {
                    depth -= 1
                    if depth == 0 { return k }
                }
            }
            k += 1
        }
        return t.count
    }

    /// The constructor opened at token `i` when it is literal fields only
    /// (nil otherwise), and the index of its closing brace.
    static func constructor(_ t: [LuaToken], _ i: Int, _ text: [UInt8]) -> (Constructor?, Int) {
        let end = matching(t, i, open: "{", close: "}", text)
        guard end < t.count else { return (nil, end) }
        var fields: [Field] = []
        var k = i + 1
        while k < end {
            // name = value
            guard t[k].kind == .name, k + 1 < end, t[k + 1].is("=", text) else { return (nil, end) }
            let key = t[k].string(text)
            guard let (value, next) = literal(t, k + 2, end, text) else { return (nil, end) }
            guard !fields.contains(where: { $0.key == key }) else { return (nil, end) }
            fields.append(Field(key: key, span: t[k].start..<t[next - 1].end, value: value))
            k = next
            if k < end {
                guard t[k].is(",", text) || t[k].is(";", text) else { return (nil, end) }
                k += 1
            }
        }
        let c = Constructor(span: t[i].start..<t[end].end, fields: fields)
        return (c, end)
    }

    /// A literal value starting at token `k` (before `end`): the value and
    /// the index of the token after it.
    static func literal(_ t: [LuaToken], _ k: Int, _ end: Int, _ text: [UInt8]) -> (Value, Int)? {
        guard k < end else { return nil }
        if let (v, r, next) = number(t, k, end, text) { return (.number(v, r), next) }
        if t[k].kind == .string { return (.other, k + 1) }
        if t[k].kind == .name, t[k].is("true", text) || t[k].is("false", text) || t[k].is("nil", text) { return (.other, k + 1) }
        if t[k].is("{", text) {
            let close = matching(t, k, open: "{", close: "}", text)
            guard close < end else { return nil }
            // {a, b} or {x = a, y = b} (either order), separators , or ;
            var j = k + 1
            var positional: [(Double, Range<Int>)] = []
            var named: [String: (Double, Range<Int>)] = [:]
            while j < close {
                if t[j].kind == .name, j + 1 < close, t[j + 1].is("=", text) {
                    let name = t[j].string(text)
                    guard name == "x" || name == "y", named[name] == nil, let (v, r, next) = number(t, j + 2, close, text) else { return nil }
                    named[name] = (v, r)
                    j = next
                } else {
                    guard let (v, r, next) = number(t, j, close, text) else { return nil }
                    positional.append((v, r))
                    j = next
                }
                if j < close {
                    guard t[j].is(",", text) || t[j].is(";", text) else { return nil }
                    j += 1
                }
            }
            if positional.count == 2 && named.isEmpty {
                return (.point(positional[0].0, positional[0].1, positional[1].0, positional[1].1), close + 1)
            }
            if positional.isEmpty, let x = named["x"], let y = named["y"] {
                return (.point(x.0, x.1, y.0, y.1), close + 1)
            }
            return nil
        }
        return nil
    }

    /// A number literal, optionally negated (`-12.5`), finite.
    static func number(_ t: [LuaToken], _ k: Int, _ end: Int, _ text: [UInt8]) -> (Double, Range<Int>, Int)? {
        var j = k
        var sign = 1.0
        if j < end, t[j].is("-", text) { sign = -1; j += 1 }
        guard j < end, t[j].kind == .number, let v = LuaTokenizer.value(ofNumber: t[j], text) else { return nil }
        let x = sign * v
        guard x.isFinite else { return nil }
        return (x, t[k].start..<t[j].end, j + 1)
    }

    /// The start of the line of the first `prepare(...)` outside every
    /// block (function, if, do, repeat), nil when there is none.
    static func firstTopLevelPrepare(_ t: [LuaToken], _ text: [UInt8]) -> Int? {
        var depth = 0
        for i in t.indices where t[i].kind == .name {
            let prevDot = i > 0 && (t[i - 1].is(".", text) || t[i - 1].is(":", text))
            if prevDot { continue }
            if t[i].is("function", text) || t[i].is("if", text) || t[i].is("do", text) || t[i].is("repeat", text) {
                depth += 1
            } else if t[i].is("end", text) || t[i].is("until", text) {
                depth = max(0, depth - 1)
            } else if depth == 0, t[i].is("prepare", text), i + 1 < t.count,
                      t[i + 1].is("(", text) || t[i + 1].is("{", text) || t[i + 1].kind == .string,
                      !(i > 0 && (t[i - 1].is("local", text) || t[i - 1].is("function", text))) {
                var s = t[i].start
                while s > 0, text[s - 1] != 10 { s -= 1 }
                return s
            }
        }
        return nil
    }
}

/// A Lua token, as much as the sketch scanner needs.
struct LuaToken: Sendable, Equatable {
    enum Kind: Sendable { case name, number, string, punct }
    var kind: Kind
    var start: Int
    var end: Int
    /// 1-based line of its first byte.
    var line: Int

    func `is`(_ s: String, _ text: [UInt8]) -> Bool {
        let u = Array(s.utf8)
        guard end - start == u.count else { return false }
        for (n, b) in u.enumerated() where text[start + n] != b { return false }
        return true
    }

    func string(_ text: [UInt8]) -> String { String(decoding: text[start..<end], as: UTF8.self) }
}

enum LuaTokenizer {
    static func isNameStart(_ b: UInt8) -> Bool { (b >= 65 && b <= 90) || (b >= 97 && b <= 122) || b == 95 }
    static func isDigit(_ b: UInt8) -> Bool { b >= 48 && b <= 57 }
    static func isNameChar(_ b: UInt8) -> Bool { isNameStart(b) || isDigit(b) }

    /// The tokens of `text`, up to the first thing that cannot be followed
    /// (an unterminated string or long bracket).
    static func tokens(_ text: [UInt8]) -> [LuaToken] {
        var out: [LuaToken] = []
        var i = 0, line = 1
        let n = text.count
        // Skips a long bracket `[==[ ... ]==]` starting at `i` (at `[`); returns false when unterminated.
        func longBracket(_ level: Int) -> Bool {
            // i is after the opening `[==[`.
            while i < n {
                if text[i] == 10 { line += 1 }
                if text[i] == 93 {   // ]
                    var j = i + 1, l = 0
                    while j < n, text[j] == 61 { l += 1; j += 1 }
                    if l == level, j < n, text[j] == 93 { i = j + 1; return true }
                }
                i += 1
            }
            return false
        }
        // The level of a long bracket opening at `i` (`[`), or nil.
        func openingLevel(_ at: Int) -> (level: Int, after: Int)? {
            guard at < n, text[at] == 91 else { return nil }
            var j = at + 1, l = 0
            while j < n, text[j] == 61 { l += 1; j += 1 }
            guard j < n, text[j] == 91 else { return nil }
            return (l, j + 1)
        }
        while i < n {
            let b = text[i]
            if b == 10 { line += 1; i += 1; continue }
            if b == 32 || b == 9 || b == 13 || b == 11 || b == 12 { i += 1; continue }
            let startLine = line, start = i
            if b == 45, i + 1 < n, text[i + 1] == 45 {   // --
                if let o = openingLevel(i + 2) {
                    i = o.after
                    if !longBracket(o.level) { return out }
                } else {
                    while i < n, text[i] != 10 { i += 1 }
                }
                continue
            }
            if let o = openingLevel(i) {
                i = o.after
                if !longBracket(o.level) { return out }
                out.append(LuaToken(kind: .string, start: start, end: i, line: startLine))
                continue
            }
            if b == 34 || b == 39 {   // " '
                i += 1
                var closed = false
                while i < n {
                    let c = text[i]
                    if c == b { i += 1; closed = true; break }
                    if c == 10 { break }
                    if c == 92 {   // backslash: the next byte is escaped (a newline too)
                        i += 1
                        if i < n, text[i] == 10 { line += 1 }
                    }
                    i += 1
                }
                if !closed { return out }
                out.append(LuaToken(kind: .string, start: start, end: min(i, n), line: startLine))
                continue
            }
            if isDigit(b) || (b == 46 && i + 1 < n && isDigit(text[i + 1])) {
                let hex = b == 48 && i + 1 < n && (text[i + 1] == 120 || text[i + 1] == 88)
                i += hex ? 2 : 1
                while i < n {
                    let c = text[i]
                    let exp = hex ? (c == 112 || c == 80) : (c == 101 || c == 69)
                    if exp, i + 1 < n, text[i + 1] == 43 || text[i + 1] == 45 { i += 2; continue }
                    if isNameChar(c) || c == 46 { i += 1; continue }
                    break
                }
                out.append(LuaToken(kind: .number, start: start, end: i, line: startLine))
                continue
            }
            if isNameStart(b) {
                while i < n, isNameChar(text[i]) { i += 1 }
                out.append(LuaToken(kind: .name, start: start, end: i, line: startLine))
                continue
            }
            // Punctuation; the two- and three-byte ones the scanner tells apart.
            var len = 1
            if i + 2 < n, b == 46, text[i + 1] == 46, text[i + 2] == 46 {
                len = 3
            } else if i + 1 < n {
                let two = (b, text[i + 1])
                if two == (46, 46) || two == (58, 58) || two == (61, 61) || two == (126, 61) || two == (60, 61) || two == (62, 61)
                    || two == (47, 47) || two == (60, 60) || two == (62, 62) {
                    len = 2
                }
            }
            i += len
            out.append(LuaToken(kind: .punct, start: start, end: i, line: startLine))
        }
        return out
    }

    /// The value of a number token as Lua reads it (decimal or hex, with
    /// exponents), nil when it is not a number.
    static func value(ofNumber t: LuaToken, _ text: [UInt8]) -> Double? {
        let s = t.string(text)
        // Decimal only: a hex integer wraps in Lua where a double would not.
        guard s.utf8.count < 400, !s.contains("x"), !s.contains("X") else { return nil }
        var end: UnsafeMutablePointer<CChar>?
        let v = s.withCString { p -> Double? in
            let x = strtod(p, &end)
            guard let end, end.pointee == 0 else { return nil }
            return x
        }
        return v
    }
}

/// Whether a chunk compiles, without running it.
public enum LuaSyntax {
    /// Lua's message when `bytes` does not compile as chunk `name`, nil when it does.
    public static func problem(_ bytes: [UInt8], name: String) -> String? {
        guard let L = wobble_newstate(64 << 20) else { return "cannot create a Lua state" }
        defer { wobble_close(L) }
        let status = (bytes + [0]).withUnsafeBufferPointer { b -> Int32 in
            guard let base = b.baseAddress else { return 0 }
            return base.withMemoryRebound(to: CChar.self, capacity: b.count) { p in
                luaL_loadbufferx(L, p, b.count - 1, "@" + name, "t")
            }
        }
        guard status != 0 else { return nil }
        guard let m = lua_tolstring(L, -1, nil) else { return "does not compile" }
        return String(cString: m)
    }
}
