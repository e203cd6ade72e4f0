import WobbleCore
import WobbleSystem

/// An argument error, worded like Lua's own (`bad argument #2 to 'impulse'
/// (number expected, got string)`); the trampoline adds the position.
struct ArgumentError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// The arguments of one host-function call, read without raising
/// (arguments checked with non-raising reads). `selfOffset` is 1 for methods, so that
/// `s:contains("a", 1)` reports `bad argument #1 to 'contains'`.
struct LuaArgs {
    let lua: LuaStack
    let function: String
    let selfOffset: Int32

    var count: Int32 { lua.top }

    /// `bad argument #n to 'f' (message)`.
    func fail(_ i: Int32, _ message: String) -> ArgumentError {
        let n = i - selfOffset
        if n <= 0 { return ArgumentError("calling '\(function)' on bad self (\(message))") }
        return ArgumentError("bad argument #\(n) to '\(function)' (\(message))")
    }

    /// `bad argument #n to 'f' (X expected, got Y)`.
    func typeError(_ i: Int32, _ expected: String) -> ArgumentError {
        fail(i, "\(expected) expected, got \(describe(lua, i))")
    }

    /// True when argument `i` is absent or nil.
    func isNil(_ i: Int32) -> Bool { lua.type(i).rawValue <= LuaType.nil.rawValue }

    func number(_ i: Int32) throws -> Double {
        guard let v = lua.number(i) else { throw typeError(i, "number") }
        return v
    }

    /// A number that is not NaN or ±inf.
    func finiteNumber(_ i: Int32) throws -> Double {
        let v = try number(i)
        guard v.isFinite else { throw typeError(i, "finite number") }
        return v
    }

    func optionalNumber(_ i: Int32) throws -> Double? {
        isNil(i) ? nil : try number(i)
    }

    func integer(_ i: Int32) throws -> Int {
        guard lua.type(i) == .number else { throw typeError(i, "number") }
        guard let v = lua.integer(i) else { throw fail(i, "number has no integer representation") }
        return v
    }

    func string(_ i: Int32) throws -> String {
        guard let s = lua.string(i) else { throw typeError(i, "string") }
        return s
    }

    /// A file path: a non-empty string without NUL bytes, its bytes kept
    /// exactly (`PathBytes`: bytes that are not UTF-8 are escaped).
    func path(_ i: Int32) throws -> String {
        guard let s = lua.pathString(i) else { throw typeError(i, "string") }
        guard !s.isEmpty else { throw fail(i, "empty path") }
        guard !s.utf8.contains(0) else { throw fail(i, "path contains a NUL byte") }
        return s
    }

    /// One of the names of `E` (`overlap("sum")`); anything else is
    /// `<function>: mode must be "sum" or "first" (got "last")`.
    func choice<E: CaseIterable & RawRepresentable>(_ i: Int32, name: String, of: E.Type = E.self) throws -> E
    where E.RawValue == String {
        guard lua.type(i) == .string, let s = lua.string(i) else {
            throw SceneError(function, "\(name) must be \(E.validNames) (got \(describe(lua, i)))")
        }
        guard let v = E(rawValue: s) else { throw SceneError(function, "\(name) must be \(E.validNames) (got \(quoted(s)))") }
        return v
    }

    func boolean(_ i: Int32) throws -> Bool {
        guard lua.type(i) == .boolean else { throw typeError(i, "boolean") }
        return lua.boolean(i)
    }
}

/// `"s"` for a message, at most 40 characters of it, control bytes escaped.
func quoted(_ s: String) -> String {
    var out = ""
    for (k, ch) in s.unicodeScalars.enumerated() {
        if k == 40 { out += "..."; break }
        out += ch.value < 0x20 || ch == "\"" || ch == "\\" ? ch.escaped(asASCII: true) : String(ch)
    }
    return "\"" + out + "\""
}

/// What a value is, for "got ..." in messages: its type name, or `nan`,
/// `inf`, `-inf` for such numbers.
func describe(_ lua: LuaStack, _ i: Int32) -> String {
    if let v = lua.number(i), !v.isFinite { return v.isNaN ? "nan" : (v > 0 ? "inf" : "-inf") }
    return lua.typeName(i)
}

/// How a table key reads in a message: `'name'`, `[1]`, or `a table key`.
func describeKey(_ lua: LuaStack, _ i: Int32) -> String {
    switch lua.type(i) {
    case .string:
        let s = lua.string(i) ?? ""
        let shown = s.unicodeScalars.map { $0.value >= 32 && $0.value < 127 ? String($0) : "?" }.joined()
        return "'\(shown.prefix(40))\(shown.count > 40 ? "…" : "")'"
    case .number:
        if let n = lua.integer(i) { return "[\(n)]" }
        let v = lua.number(i) ?? 0
        return "[\(v.isFinite ? String(v) : describe(lua, i))]"
    default:
        return "a \(lua.typeName(i)) key"
    }
}

/// Reads tables given to API functions (points, option tables), raw and
/// without raising; errors read `function: message`.
struct TableReader {
    let lua: LuaStack
    let function: String

    /// The keys of the table at `t`: string keys as themselves, other keys
    /// described (`[1]`), sorted so that messages are deterministic.
    func keys(_ t: Int32) -> [(name: String?, shown: String)] {
        let t = lua.absIndex(t)
        var out: [(name: String?, shown: String)] = []
        lua.pushNil()
        while lua.next(t) {
            lua.pop()   // value
            let name = lua.type(-1) == .string ? lua.string(-1) : nil
            out.append((name, describeKey(lua, -1)))
        }
        return out.sorted { $0.shown < $1.shown }
    }

    /// Rejects keys of the option table at `t` not in `valid`:
    /// `addSketch: unknown key 'widht' (valid: lt, rt, ...)`.
    func checkKeys(_ t: Int32, valid: [String]) throws {
        for k in keys(t) where k.name.map({ !valid.contains($0) }) ?? true {
            throw SceneError(function, "unknown key \(k.shown) (valid: \(valid.joined(separator: ", ")))")
        }
    }

    /// True when the table at `t` has a non-nil value at `key`.
    func has(_ t: Int32, _ key: String) -> Bool {
        let present = lua.rawGet(t, key) != .nil
        lua.pop()
        return present
    }

    /// The number at `t[key]`, nil when absent; `finite` also rejects NaN, ±inf.
    func number(_ t: Int32, _ key: String, finite: Bool = false) throws -> Double? {
        lua.rawGet(t, key)
        defer { lua.pop() }
        if lua.type(-1) == .nil { return nil }
        guard let v = lua.number(-1), !finite || v.isFinite else {
            throw SceneError(function, "\(key) must be a \(finite ? "finite " : "")number, got \(describe(lua, -1))")
        }
        return v
    }

    /// The string at `t[key]`, nil when absent: `addSketch: cutout must be
    /// "auto" or a mask image's path (got number)`.
    func string(_ t: Int32, _ key: String, expected: String) throws -> String? {
        lua.rawGet(t, key)
        defer { lua.pop() }
        if lua.type(-1) == .nil { return nil }
        guard lua.type(-1) == .string, let s = lua.pathString(-1), !s.isEmpty else {
            throw SceneError(function, "\(key) must be \(expected) (got \(lua.type(-1) == .string ? "an empty string" : describe(lua, -1)))")
        }
        guard !s.utf8.contains(0) else { throw SceneError(function, "\(key): path contains a NUL byte") }
        return s
    }

    /// The name at `t[key]` as one of `E`'s values, nil when absent:
    /// `addSketch: pin must be "bottom", "top", "left" or "right" (got "up")`.
    func choice<E: CaseIterable & RawRepresentable>(_ t: Int32, _ key: String, of: E.Type = E.self) throws -> E?
    where E.RawValue == String {
        lua.rawGet(t, key)
        defer { lua.pop() }
        if lua.type(-1) == .nil { return nil }
        return try choice(-1, name: key)
    }

    /// The model named at `t[key]` (one of `catalog`'s), nil when absent.
    func motion(_ t: Int32, _ key: String, among catalog: MotionCatalog) throws -> MotionKind? {
        lua.rawGet(t, key)
        defer { lua.pop() }
        if lua.type(-1) == .nil { return nil }
        return try motion(-1, name: key, among: catalog)
    }

    /// The model named at stack index `i`: one of `catalog`'s names, else
    /// `sketch: motion must be "classic" or "spring" (got "jelly")`.
    func motion(_ i: Int32, name: String, among catalog: MotionCatalog) throws -> MotionKind {
        guard lua.type(i) == .string, let s = lua.string(i) else {
            throw SceneError(function, "\(name) must be \(catalog.namesText) (got \(describe(lua, i)))")
        }
        guard let v = catalog.kind(named: s) else { throw SceneError(function, "\(name) must be \(catalog.namesText) (got \(quoted(s)))") }
        return v
    }

    /// The value at stack index `i` as one of `E`'s names; `name` names it.
    func choice<E: CaseIterable & RawRepresentable>(_ i: Int32, name: String, of: E.Type = E.self) throws -> E
    where E.RawValue == String {
        guard lua.type(i) == .string, let s = lua.string(i) else {
            throw SceneError(function, "\(name) must be \(E.validNames) (got \(describe(lua, i)))")
        }
        guard let v = E(rawValue: s) else { throw SceneError(function, "\(name) must be \(E.validNames) (got \(quoted(s)))") }
        return v
    }

    /// The point at `t[key]`, nil when absent.
    func point(_ t: Int32, _ key: String) throws -> Point? {
        lua.rawGet(t, key)
        defer { lua.pop() }
        if lua.type(-1) == .nil { return nil }
        return try point(-1, name: key)
    }

    /// A point `{x, y}` or `{x = .., y = ..}` at stack index `i`, with finite
    /// coordinates and no other keys; `name` names it in messages.
    func point(_ i: Int32, name: String) throws -> Point {
        let form = "a point {x, y} or {x = .., y = ..}"
        guard lua.type(i) == .table else {
            throw SceneError(function, "\(name) must be \(form), got \(describe(lua, i))")
        }
        let i = lua.absIndex(i)
        var named = false, positional = false
        let ks = keys(i)
        if ks.isEmpty { throw SceneError(function, "\(name) must be \(form), got an empty table") }
        for k in ks {
            switch k.shown {
            case "'x'", "'y'": named = true
            case "[1]", "[2]": positional = true
            default: throw SceneError(function, "\(name) has unknown key \(k.shown) (\(form))")
            }
        }
        if named && positional { throw SceneError(function, "\(name) mixes {x, y} and {x = .., y = ..}") }
        func coordinate(_ read: () -> LuaType, _ label: String) throws -> Double {
            _ = read()
            defer { lua.pop() }
            guard let v = lua.number(-1), v.isFinite else {
                throw SceneError(function, "\(name)\(label) must be a finite number, got \(describe(lua, -1))")
            }
            if let problem = CheckedNumbers.coordinateProblem(v) { throw SceneError(function, "\(name)\(label) \(problem)") }
            return v
        }
        if named {
            return Point(try coordinate({ lua.rawGet(i, "x") }, ".x"), try coordinate({ lua.rawGet(i, "y") }, ".y"))
        }
        return Point(try coordinate({ lua.rawGet(i, 1) }, "[1]"), try coordinate({ lua.rawGet(i, 2) }, "[2]"))
    }
}

extension LuaStack {
    /// Pushes `{x = p.x, y = p.y}`.
    func push(_ p: Point) {
        newTable(record: 2)
        push(p.x)
        rawSet(-2, "x")
        push(p.y)
        rawSet(-2, "y")
    }
}
