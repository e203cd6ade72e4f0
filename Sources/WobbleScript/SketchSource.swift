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
        /// `local NAME = addSketch...` or `NAME = addSketch...`: the name,
        /// its span and the span of the whole statement up to the argument's end.
        public var declaration: Declaration?
        /// Where the name `addSketch` starts.
        public var nameStart: Int = 0
    }

    /// The local (or variable) a call is assigned to.
    public struct Declaration: Sendable, Equatable {
        public var name: String
        public var nameSpan: Range<Int>
        /// Where the statement starts (`local`, or the name).
        public var statementStart: Int
        public var isLocal: Bool
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
        /// The value's text.
        public var valueSpan: Range<Int>
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
    /// top-level `prepare(...)`, `wait(...)` or `untilStill(...)` (where a
    /// run puts the sketches the studio added), nil when there is none (the end).
    public let insertionPoint: Int?
    private let byLine: [Int: [Int]]
    /// Every name in the text (not after `.` or `:`) with the line of each use.
    public let names: [String: [Int]]

    public init(text: [UInt8]) {
        self.text = text
        let tokens = LuaTokenizer.tokens(text)
        calls = SketchSource.findCalls(tokens, text)
        var index: [Int: [Int]] = [:]
        for (i, c) in calls.enumerated() { index[c.line, default: []].append(i) }
        byLine = index
        insertionPoint = SketchSource.firstTopLevelStep(tokens, text)
        var names: [String: [Int]] = [:]
        for (i, t) in tokens.enumerated() where t.kind == .name {
            if i > 0, tokens[i - 1].is(".", text) || tokens[i - 1].is(":", text) { continue }
            names[t.string(text), default: []].append(t.line)
        }
        self.names = names
        statementStarts = Set(tokens.indices.filter { SketchSource.startsStatement(tokens, $0, text) }.map { tokens[$0].start })
        self.tokens = tokens
    }

    private let tokens: [LuaToken]

    /// Token starts where a statement may begin (a call's own line start,
    /// after a complete expression): where `local NAME = ` can go.
    private let statementStarts: Set<Int>

    static func startsStatement(_ t: [LuaToken], _ i: Int, _ text: [UInt8]) -> Bool {
        guard i == 0 || t[i - 1].line < t[i].line else { return false }
        guard i > 0 else { return true }
        let p = t[i - 1]
        switch p.kind {
        case .number, .string: return true
        case .name: return !["return", "and", "or", "not", "local", "in", "until", "if", "elseif", "while", "function"].contains(p.string(text))
        case .punct: return p.is(")", text) || p.is("}", text) || p.is("]", text) || p.is(";", text)
        }
    }

    /// The call made by the index-th `addSketch` in the text (its position
    /// among `calls`).
    public func index(of call: Call) -> Int? { calls.firstIndex { $0.argumentSpan == call.argumentSpan } }

    /// The text of a call as a save compares it: its declaration and argument.
    public func identity(_ call: Call) -> [UInt8] {
        Array(text[call.argumentSpan]) + Array((call.declaration?.name ?? "").utf8)
    }

    /// The path of the first `image("...")` call of the text whose
    /// argument is a plain string literal (no escapes), nil when there is
    /// none: what the scene will show, known before it runs (the studio
    /// shows it while the scene's first run goes on).
    public static func imageLiteral(_ text: [UInt8]) -> String? {
        let t = LuaTokenizer.tokens(text)
        guard t.count >= 4 else { return nil }
        for i in 0..<(t.count - 3) where t[i].kind == .name && t[i].is("image", text) {
            if i > 0, t[i - 1].is(".", text) || t[i - 1].is(":", text) { continue }
            guard t[i + 1].is("(", text), t[i + 2].kind == .string, t[i + 3].is(")", text) else { continue }
            let lit = t[i + 2]
            guard lit.end - lit.start >= 2, text[lit.start] == 34 || text[lit.start] == 39 else { continue }
            let body = Array(text[(lit.start + 1)..<(lit.end - 1)])
            guard !body.contains(92), !body.isEmpty else { continue }
            return String(decoding: body, as: UTF8.self)
        }
        return nil
    }

    // MARK: Names

    /// Why `name` cannot be the new name of `call`'s local, nil when it can
    /// (a Lua name, not a keyword, not used anywhere in the text, and the
    /// call's own name used nowhere else: the rename changes the declaration only).
    public func renameProblem(_ call: Call, to name: String) -> String? {
        if let p = SketchSource.nameProblem(name) { return p }
        if name == call.declaration?.name { return nil }
        if let lines = names[name] { return "\(name) is already used on line \(lines[0])" }
        if let d = call.declaration {
            let uses = (names[d.name] ?? []).filter { $0 != call.line }
            if let first = uses.first {
                return "\(d.name) is used on line \(first): rename it there too in a text editor (the studio renames the declaration only)"
            }
            if !d.isLocal { return "\(d.name) is not a local: rename it in a text editor" }
        } else if !canDeclare(call) {
            return "line \(call.line): this sketch is part of a longer statement: name it in a text editor"
        }
        return nil
    }

    /// Why `name` is not a Lua name for a local, nil when it is one.
    public static func nameProblem(_ name: String) -> String? {
        let u = Array(name.utf8)
        guard let f = u.first, LuaTokenizer.isNameStart(f), u.allSatisfy(LuaTokenizer.isNameChar) else {
            return "'\(name)' is not a Lua name (letters, digits and _, not starting with a digit)"
        }
        if LuaTokenizer.keywords.contains(name) { return "'\(name)' is a Lua keyword" }
        if u.count > 60 { return "'\(name)' is too long (60 characters at most)" }
        // A local named like a global the scene calls would hide it from
        // there on (`_ENV` would hide every one).
        if name.hasPrefix("_"), name.dropFirst().first?.isUppercase == true {
            return "'\(name)' is reserved by Lua (_ and capitals)"
        }
        if SketchSource.globalNames.contains(name) {
            return "'\(name)' is a function or library the scene can call: a local of that name would hide it"
        }
        return nil
    }

    /// The globals a scene sees: Lua's standard library and the API.
    static let globalNames: Set<String> = Set(["assert", "collectgarbage", "dofile", "error", "getmetatable", "ipairs",
        "load", "loadfile", "next", "pairs", "pcall", "print", "rawequal", "rawget", "rawlen", "rawset", "require",
        "select", "setmetatable", "tonumber", "tostring", "type", "xpcall", "coroutine", "debug", "io", "math", "os",
        "package", "string", "table", "utf8"] + LuaAPIDoc.registeredGlobals + LuaAPIDoc.readGlobals)

    /// Whether `local NAME = ` can be put before the call (it starts its statement).
    func canDeclare(_ call: Call) -> Bool {
        guard call.declaration == nil else { return true }
        return statementStarts.contains(call.nameStart)
    }

    /// `regionN`, N the first number from 1 whose name is used neither in
    /// the text nor in `taken`.
    public func nextFreeName(taken: Set<String> = []) -> String {
        var n = 1
        while names["region\(n)"] != nil || taken.contains("region\(n)") { n += 1 }
        return "region\(n)"
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

    // MARK: Deleting

    /// The bytes that deleting `call` takes out of the text, or why the
    /// studio cannot delete it (the reason, after the region's name).
    /// Deletable: a statement `local NAME = addSketch...` or `addSketch...`
    /// (a `;` after it allowed) alone on its lines (a `--` comment after
    /// it goes with it), whose local nothing else in the text names
    /// (except on `ignoringLines`: lines a save takes out too). Taken out:
    /// those whole lines.
    public func deletion(_ call: Call, ignoringLines: Set<Int> = []) -> Result<Range<Int>, DeletionProblem> {
        let start = call.declaration?.statementStart ?? call.nameStart
        guard let s = tokens.firstIndex(where: { $0.start == start }),
              var e = tokens.firstIndex(where: { $0.end == call.argumentSpan.upperBound }), e >= s else {
            return .failure(.notAlone(line: call.line))
        }
        if let d = call.declaration, !d.isLocal { return .failure(.notLocal(d.name)) }
        // The statement starts one (after a complete one, on an earlier line)...
        guard SketchSource.startsStatement(tokens, s, text) else { return .failure(.notAlone(line: call.line)) }
        var lineStart = tokens[s].start
        while lineStart > 0, text[lineStart - 1] != 10 { lineStart -= 1 }
        guard text[lineStart..<tokens[s].start].allSatisfy({ $0 == 32 || $0 == 9 }) else { return .failure(.notAlone(line: call.line)) }
        // ... and ends its last line: nothing after it there but a `;` and a
        // short comment, and the next statement does not go on with it.
        if e + 1 < tokens.count, tokens[e + 1].line == tokens[e].line, tokens[e + 1].is(";", text) { e += 1 }
        if e + 1 < tokens.count {
            let next = tokens[e + 1]
            guard next.line > tokens[e].line,
                  (next.kind == .name && !next.is("and", text) && !next.is("or", text)) || next.is(";", text) || next.is("::", text)
            else { return .failure(.notAlone(line: call.line)) }
        }
        var end = tokens[e].end
        while end < text.count, text[end] == 32 || text[end] == 9 || text[end] == 13 { end += 1 }
        if end + 1 < text.count, text[end] == 45, text[end + 1] == 45 {
            // A short comment to the end of the line (not a long one, which could run on).
            guard end + 2 >= text.count || text[end + 2] != 91 else { return .failure(.notAlone(line: call.line)) }
            while end < text.count, text[end] != 10 { end += 1 }
        }
        guard end == text.count || text[end] == 10 else { return .failure(.notAlone(line: call.line)) }
        if end < text.count { end += 1 }
        // Its local, used nowhere else (a field `x.name` is not a use, nor
        // a table's key `{name = 1}`, nor another `local name`).
        if let d = call.declaration {
            let keys = tableKeys()
            for (i, t) in tokens.enumerated() where t.kind == .name && t.start != d.nameSpan.lowerBound && t.is(d.name, text) {
                if i > 0, tokens[i - 1].is(".", text) || tokens[i - 1].is(":", text) || tokens[i - 1].is("local", text) { continue }
                if keys.contains(i) || ignoringLines.contains(t.line) { continue }
                return .failure(.used(d.name, line: t.line))
            }
        }
        return .success(lineStart..<end)
    }

    /// The tokens that are a table constructor's keys (`h` of `{w = 40,
    /// h = 80}`): a name right after `{`, `,` or `;` and before `=`, whose
    /// innermost open bracket or block is a `{` (a block inside the table,
    /// `function ... end`, is not the table: `a, h = 1, 2` there assigns).
    func tableKeys() -> Set<Int> {
        var open: [String] = [], keys = Set<Int>()
        for (i, t) in tokens.enumerated() {
            let word = t.string(text)
            switch t.kind {
            case .punct where ["{", "(", "["].contains(word): open.append(word)
            case .punct where ["}", ")", "]"].contains(word): if !open.isEmpty { open.removeLast() }
            case .name where ["function", "do", "if", "repeat"].contains(word): open.append(word)
            case .name where ["end", "until"].contains(word): if !open.isEmpty { open.removeLast() }
            case .name:
                if open.last == "{", i > 0, i + 1 < tokens.count, tokens[i + 1].is("=", text),
                   tokens[i - 1].is("{", text) || tokens[i - 1].is(",", text) || tokens[i - 1].is(";", text) {
                    keys.insert(i)
                }
            default: break
            }
        }
        return keys
    }

    /// Why the studio cannot delete a region's `addSketch` from the text.
    public enum DeletionProblem: Error, Equatable, Sendable {
        /// The statement holds more than the call, or shares its lines.
        case notAlone(line: Int)
        /// Assigned to a global (another file may use it).
        case notLocal(String)
        /// Its local is named on that line.
        case used(String, line: Int)

        /// The reason, after `cannot delete NAME (scene.lua:2): `.
        public var reason: String {
            switch self {
            case .notAlone(let line):
                return "line \(line) holds more than its addSketch{...}; delete it in a text editor"
            case .notLocal(let name):
                return "\(name) is not a local (another file may use it); delete its line in a text editor"
            case .used(let name, let line):
                return "line \(line) uses \(name); delete that line first (a touch, impulse or shake: its tick on the timeline), or edit the scene in a text editor"
            }
        }
    }

    // MARK: Rewriting

    /// An error of a rewrite (the text cannot take the edit).
    public struct RewriteError: Error, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// One sketch to write: the call, what its text gives, what it should give.
    public struct Edit {
        public var call: Call
        public var old: SketchState
        public var new: SketchState
        public init(call: Call, old: SketchState, new: SketchState) {
            self.call = call
            self.old = old
            self.new = new
        }
    }

    /// The text with the constructors of `edits` (call → new points, the
    /// call's own points beside) rewritten and `added` sketches inserted as
    /// their own lines; every other byte stays.
    public func rewritten(edits: [(call: Call, old: SketchPoints, new: SketchPoints)], added: [SketchPoints]) throws -> [UInt8] {
        try rewritten(edits.map { Edit(call: $0.call, old: SketchState(points: $0.old), new: SketchState(points: $0.new)) },
                      added: added.map { SketchState(points: $0) })
    }

    /// The text with the sketches of `edits` rewritten (only the literals,
    /// keys and names that change), `added` sketches inserted as their
    /// own lines, `local NAME = addSketch{...}` (a free `regionN` when
    /// unnamed), and the statements of `deleted` calls taken out (their
    /// whole lines, `deletion`); every other byte stays.
    public func rewritten(_ edits: [Edit], added: [SketchState], deleted: [Call] = []) throws -> [UInt8] {
        var replacements: [(Range<Int>, String)] = []
        for c in deleted {
            switch deletion(c) {
            case .success(let lines): replacements.append((lines, ""))
            case .failure(let problem):
                throw RewriteError(message: "cannot delete \(c.declaration?.name ?? "the region of line \(c.line)"): \(problem.reason)")
            }
        }
        for e in edits {
            replacements += try SketchSource.replacements(e.call, old: e.old, new: e.new, text: text)
            if e.new.name != e.old.name, let name = e.new.name {
                if let problem = renameProblem(e.call, to: name) { throw RewriteError(message: "line \(e.call.line): \(problem)") }
                if let d = e.call.declaration {
                    replacements.append((d.nameSpan, name))
                } else {
                    let at = e.call.nameStart
                    replacements.append((at..<at, "local \(name) = "))
                }
            }
        }
        if !added.isEmpty {
            var taken = Set(added.compactMap(\.name))
            var lines = ""
            for a in added {
                let name = a.name ?? nextFreeName(taken: taken)
                taken.insert(name)
                lines += "local \(name) = addSketch" + SketchSource.addedConstructor(a) + "\n"
            }
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
        // Deletions that touch or overlap (a key removed beside a rectangle
        // turned into corners) are one deletion.
        let deletions = SketchSource.mergedRanges(replacements.filter { $0.1.isEmpty }.map(\.0))
        replacements = replacements.filter { !$0.1.isEmpty || $0.0.isEmpty } + deletions.map { ($0, "") }
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

    /// A parameter as written: at most four decimals, no trailing zeros.
    public static func formatParameter(_ v: Double) -> String { LuaLiteral.number(v, decimals: 4) }

    /// The constructor of an added sketch: `{x = .., y = .., w = .., h = ..}`
    /// while it is an axis-aligned rectangle, else the corners; then its
    /// parameters that differ from the defaults.
    static func addedConstructor(_ a: SketchState) -> String {
        let p = a.points
        let w = p.rt.x - p.lt.x, h = p.lb.y - p.lt.y
        let rect = p.lt.y == p.rt.y && p.lb.y == p.rb.y && p.lt.x == p.lb.x && p.rt.x == p.rb.x && w >= 0 && h >= 0
        var fields = rect ? "x = \(format(p.lt.x)), y = \(format(p.lt.y)), w = \(format(w)), h = \(format(h))" : cornerFields(p)
        if let c = p.center { fields += ", center = \(formatPoint(c))" }
        for (k, v) in parameterFields(old: .original, new: a.parameters, present: { _ in nil }).inserts { fields += ", \(k) = \(v)" }
        return "{" + fields + "}"
    }

    /// The keys of the parameters in the order they are written: the
    /// model, the number parameters of the models' tables, pin, cutout.
    public static func parameterKeys(_ catalog: MotionCatalog = .standard) -> [String] {
        ["motion"] + catalog.parameters.map(\.key) + ["pin", "cutout"]
    }

    /// Whether `key` may be given for a sketch of `motion` (a number
    /// parameter: when the model's table has it).
    public static func applies(_ key: String, to motion: MotionKind, _ catalog: MotionCatalog = .standard) -> Bool {
        guard catalog.parameter(key) != nil else { return true }
        return catalog.declaration(motion)?.parameter(key) != nil
    }

    /// A parameter's value as a Lua literal (nil: the key is best left out).
    static func literal(_ key: String, _ p: WobbleParameters, _ catalog: MotionCatalog = .standard) -> String? {
        switch key {
        case "motion": return "\"\(p.motion.rawValue)\""
        case "pin": return p.pin.map { "\"\($0.rawValue)\"" }
        case "cutout":
            switch p.cutout?.source {
            case .auto: return "\"auto\""
            case .file(_, let written): return LuaLiteral.string(written)
            case .memory, nil: return nil
            }
        default:
            guard let q = catalog.declaration(p.motion)?.parameter(key) ?? catalog.parameter(key) else { return nil }
            return LuaLiteral.number(q.get(p), decimals: q.decimals)
        }
    }

    /// What changes so that a constructor giving `old` gives `new`: fields
    /// whose value is replaced, fields removed (a key that no longer applies,
    /// `pin` back to none) and keys inserted (a value the default would not
    /// give). `present` finds a key's field in the constructor. The keys
    /// are the standard models' and those of the two models (each
    /// parameters' kind carries its table), so any model is written.
    static func parameterFields(old: WobbleParameters, new: WobbleParameters, present: (String) -> Field?)
        -> (replaced: [(Field, String)], removed: [Field], inserts: [(String, String)]) {
        let catalog = MotionCatalog(MotionCatalog.standard.models + [old.motion.declaration, new.motion.declaration])
        var replaced: [(Field, String)] = [], removed: [Field] = [], inserts: [(String, String)] = []
        // What the text gives for a key left out: the default model, and
        // the defaults of the model it names.
        let implied = catalog.defaults(new.motion)
        for key in parameterKeys(catalog) {
            // A mask still in memory is not text yet (a save writes its file
            // and names it first): the key stays as the text has it.
            if key == "cutout", case .memory? = new.cutout?.source { continue }
            let field = present(key)
            guard applies(key, to: new.motion, catalog) else {
                if let field { removed.append(field) }
                continue
            }
            let lit = literal(key, new, catalog)
            if let field {
                guard literal(key, old, catalog) != lit else { continue }
                if let lit { replaced.append((field, lit)) } else { removed.append(field) }
            } else if lit != (key == "motion" ? literal(key, catalog.defaults(catalog.models[0].kind), catalog)
                                               : literal(key, implied, catalog)), let lit {
                inserts.append((key, lit))
            }
        }
        return (replaced, removed, inserts)
    }

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
    static func replacements(_ call: Call, old oldState: SketchState, new newState: SketchState, text: [UInt8]) throws -> [(Range<Int>, String)] {
        if let p = problem(call) { throw RewriteError(message: "line \(call.line): this sketch is \(p)") }
        let new = newState.points
        switch call.argument {
        case .computed:
            throw RewriteError(message: "line \(call.line): this sketch is computed")
        case .absent:
            var fields = cornerFields(new) + (new.center.map { ", center = \(formatPoint($0))" } ?? "")
            for (k, v) in parameterFields(old: .original, new: newState.parameters, present: { _ in nil }).inserts { fields += ", \(k) = \(v)" }
            return [(call.argumentSpan, "{" + fields + "}")]
        case .table(let c):
            var out = try pointReplacements(c, old: oldState.points, new: new)
            guard oldState.parameters != newState.parameters else { return out }
            // The parameters: values replaced, keys removed, keys added after
            // the last field that stays.
            let (replaced, removed, inserts) = parameterFields(old: oldState.parameters, new: newState.parameters, present: { c.field($0) })
            out += replaced.map { ($0.0.valueSpan, $0.1) }
            let removedKeys = Set(removed.map(\.key))
            let kept = c.fields.enumerated().filter { !removedKeys.contains($0.element.key) }
            var cut: [Range<Int>] = []
            for (i, f) in c.fields.enumerated() where removedKeys.contains(f.key) {
                if let next = c.fields[(i + 1)...].first(where: { !removedKeys.contains($0.key) }) {
                    cut.append(f.span.lowerBound..<next.span.lowerBound)
                } else if let prev = kept.last(where: { $0.offset < i }) {
                    cut.append(prev.element.span.upperBound..<f.span.upperBound)
                } else {
                    cut.append(f.span)
                }
            }
            out += mergedRanges(cut).map { ($0, "") }
            if !inserts.isEmpty {
                let list = inserts.map { "\($0.0) = \($0.1)" }.joined(separator: ", ")
                if let last = kept.last {
                    out.append((last.element.span.upperBound..<last.element.span.upperBound, ", " + list))
                } else {
                    // No field stays: before the closing brace (after the
                    // corners when those were put in).
                    let at = c.span.upperBound - 1
                    let cornersPut = out.contains { $0.0.isEmpty && $0.0.lowerBound == c.span.lowerBound + 1 }
                    out.append((at..<at, (cornersPut ? ", " : "") + list))
                }
            }
            return out
        }
    }

    static func mergedRanges(_ ranges: [Range<Int>]) -> [Range<Int>] {
        var merged: [Range<Int>] = []
        for r in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = merged.last, r.lowerBound <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, r.upperBound)
            } else {
                merged.append(r)
            }
        }
        return merged.filter { !$0.isEmpty }
    }

    /// The byte edits of a constructor's points.
    static func pointReplacements(_ c: Constructor, old: SketchPoints, new: SketchPoints) throws -> [(Range<Int>, String)] {
        guard old != new else { return [] }
        do {
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
            var declaration: Declaration?
            if i >= 2, t[i - 1].is("=", text), t[i - 2].kind == .name, !LuaTokenizer.keywords.contains(t[i - 2].string(text)) {
                let isLocal = i >= 3 && t[i - 3].is("local", text)
                let before = isLocal ? (i >= 4 ? t[i - 4] : nil) : (i >= 3 ? t[i - 3] : nil)
                // `a, b = ...` and `x.y = ...` are not a plain declaration.
                let plain = before.map { !($0.is(",", text) || $0.is(".", text) || $0.is(":", text)) } ?? true
                if plain {
                    declaration = Declaration(name: t[i - 2].string(text), nameSpan: t[i - 2].start..<t[i - 2].end,
                                              statementStart: isLocal ? t[i - 3].start : t[i - 2].start, isLocal: isLocal)
                }
            }
            let n = t[i + 1]
            if n.kind == .punct && n.is("{", text) {
                let (c, end) = constructor(t, i + 1, text)
                let span = n.start..<(end < t.count ? t[end].end : text.count)
                calls.append(Call(line: t[i].line, argumentSpan: span, argument: c.map { .table($0) } ?? .computed, declaration: declaration, nameStart: t[i].start))
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
                calls.append(Call(line: t[i].line, argumentSpan: span, argument: argument, declaration: declaration, nameStart: t[i].start))
            } else if n.kind == .string {
                calls.append(Call(line: t[i].line, argumentSpan: n.start..<n.end, argument: .computed, declaration: declaration, nameStart: t[i].start))
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
            fields.append(Field(key: key, span: t[k].start..<t[next - 1].end, value: value, valueSpan: t[k + 2].start..<t[next - 1].end))
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

    /// The start of the `--` comment lines right above the line starting
    /// at `s` (no blank line between), else `s`: what is added goes above
    /// the comment, which stays with the line it describes.
    static func commentAbove(_ s: Int, _ t: [LuaToken], _ text: [UInt8]) -> Int {
        var at = s
        while at > 0 {
            var ls = at - 1
            while ls > 0, text[ls - 1] != 10 { ls -= 1 }
            var i = ls
            while i < at, text[i] == 32 || text[i] == 9 { i += 1 }
            // A line that is only a comment: `--`, and no token on it (not
            // the inside of a long string).
            guard i + 1 < at, text[i] == 45, text[i + 1] == 45,
                  !t.contains(where: { $0.start < at && $0.end > ls }) else { break }
            at = ls
        }
        return at
    }

    /// The start of the line of the first `prepare(...)`, `wait(...)` or
    /// `untilStill(...)` outside every block (function, if, do, repeat), nil
    /// when there is none.
    static func firstTopLevelStep(_ t: [LuaToken], _ text: [UInt8]) -> Int? {
        var depth = 0
        for i in t.indices where t[i].kind == .name {
            let prevDot = i > 0 && (t[i - 1].is(".", text) || t[i - 1].is(":", text))
            if prevDot { continue }
            if t[i].is("function", text) || t[i].is("if", text) || t[i].is("do", text) || t[i].is("repeat", text) {
                depth += 1
            } else if t[i].is("end", text) || t[i].is("until", text) {
                depth = max(0, depth - 1)
            } else if depth == 0, t[i].is("prepare", text) || t[i].is("wait", text) || t[i].is("untilStill", text), i + 1 < t.count,
                      t[i + 1].is("(", text) || t[i + 1].is("{", text) || t[i + 1].kind == .string,
                      !(i > 0 && (t[i - 1].is("local", text) || t[i - 1].is("function", text))) {
                var s = t[i].start
                while s > 0, text[s - 1] != 10 { s -= 1 }
                return commentAbove(s, t, text)
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
    static let keywords: Set<String> = ["and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in",
                                        "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while"]
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
    /// Lua's message when `bytes`, the text of file `name`, does not
    /// compile, nil when it does. Read as `luaL_loadfile` reads a scene
    /// file: a UTF-8 byte order mark at its start and a first line that
    /// begins with `#` (`#!/usr/bin/env wobble-run`) are not Lua (the line
    /// counts, so the line numbers are the file's).
    public static func problem(_ bytes: [UInt8], name: String) -> String? {
        guard let L = wobble_newstate(64 << 20) else { return "cannot create a Lua state" }
        defer { wobble_close(L) }
        var chunk = bytes[...]
        if chunk.starts(with: [0xEF, 0xBB, 0xBF]) { chunk = chunk.dropFirst(3) }
        if chunk.first == UInt8(ascii: "#") { chunk = chunk.drop { $0 != UInt8(ascii: "\n") } }
        let status = (Array(chunk) + [0]).withUnsafeBufferPointer { b -> Int32 in
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
