import WobbleCore

/// The argument of `perform{...}`: a list of entries `{t, touch = {x0, y0,
/// x1, y1}}` or `{t, shake = {ax, ay}}`, read without raising.
enum PerformTable {
    /// The most entries one `perform` takes.
    static let maxEntries = 100_000

    static func read(_ a: LuaArgs, _ i: Int32) throws -> [PerformedEvent] {
        let lua = a.lua
        guard lua.type(i) == .table else { throw a.typeError(i, "table") }
        let t = lua.absIndex(i)
        let r = TableReader(lua: lua, function: "perform")
        let n = lua.rawLength(t)
        guard n <= maxEntries else { throw SceneError("perform", "\(n) entries: at most \(maxEntries)") }
        let positions = Set((0..<min(n, maxEntries)).map { "[\($0 + 1)]" })
        for k in r.keys(t) where k.name != nil || !positions.contains(k.shown) {
            throw SceneError("perform", "unknown key \(k.shown) (a list of {t, touch = {x0, y0, x1, y1}} or {t, shake = {ax, ay}})")
        }
        var out: [PerformedEvent] = []
        for e in 1...max(1, n) where n > 0 {
            lua.rawGet(t, e)
            defer { lua.pop() }
            let entry = lua.absIndex(-1)
            guard lua.type(entry) == .table else {
                throw SceneError("perform", "entry \(e) must be a table {t, touch = {...}} or {t, shake = {...}}, got \(describe(lua, entry))")
            }
            for k in r.keys(entry) where !["[1]", "'touch'", "'shake'"].contains(k.shown) {
                throw SceneError("perform", "entry \(e): unknown key \(k.shown) (valid: [1] the time, touch, shake)")
            }
            lua.rawGet(entry, 1)
            let time = lua.number(-1)
            lua.pop()
            guard let time, time.isFinite, time >= 0 else {
                throw SceneError("perform", "entry \(e): its first value must be the time in seconds (a finite number >= 0)")
            }
            let touch = try numbers(a, entry, "touch", count: 4, entry: e)
            let shake = try numbers(a, entry, "shake", count: 2, entry: e)
            switch (touch, shake) {
            case (let p?, nil):
                out.append(PerformedEvent(time: time, action: .touch(from: Point(p[0], p[1]), to: Point(p[2], p[3]))))
            case (nil, let g?):
                out.append(PerformedEvent(time: time, action: .shake(ax: g[0], ay: g[1])))
            default:
                throw SceneError("perform", "entry \(e): give touch = {x0, y0, x1, y1} or shake = {ax, ay} (one of them)")
            }
        }
        return out
    }

    /// `entry[key]` as `count` finite numbers, nil when absent.
    private static func numbers(_ a: LuaArgs, _ entry: Int32, _ key: String, count: Int, entry e: Int) throws -> [Double]? {
        let lua = a.lua
        lua.rawGet(entry, key)
        defer { lua.pop() }
        if lua.type(-1) == .nil { return nil }
        let list = lua.absIndex(-1)
        guard lua.type(list) == .table, lua.rawLength(list) == count else {
            throw SceneError("perform", "entry \(e): \(key) must be \(count) numbers")
        }
        var out: [Double] = []
        for j in 1...count {
            lua.rawGet(list, j)
            let v = lua.number(-1)
            lua.pop()
            guard let v, v.isFinite, CheckedNumbers.coordinateProblem(v) == nil else {
                throw SceneError("perform", "entry \(e): \(key) must be \(count) finite numbers")
            }
            out.append(v)
        }
        return out
    }
}
