import WobbleCore

/// One field of wobble handles and of the tables `wobbleModels()` returns.
struct WobbleField: Sendable {
    let name: String
    /// Pushes the field of `model` at the scene's current time.
    let push: @Sendable (ScriptSession, LuaStack, WobbleModel) -> Void
}

/// The effect layer and wobble handles: `prepare`, `wobbleModels`,
/// `impulse`, `touch`, `reset`, the handles' (read-only) fields. Their
/// fields are listed once, in `wobbleFieldTable`.
extension ScriptSession {
    static let wobbleAPI: [HostFunction] = [
        HostFunction("prepare") { s, a in
            if let e = s.scene.loopProblem("prepare") { throw e }
            return s.prepare(a)
        },
        HostFunction("wobbleModels") { s, a in s.wobbleModels(a) },
        HostFunction("impulse") { s, a in try s.impulse(a) },
        HostFunction("touch") { s, a in try s.touch(a) },
        HostFunction("perform") { s, a in try s.perform(a) },
        HostFunction("reset") { s, _ in
            if let e = s.scene.loopProblem("reset") { throw e }
            s.scene.reset()
            // Sound handles loaded so far stop working (`sound()` again).
            s.soundGeneration += 1
            return 0
        },
        HostFunction("__index", .wobbleMeta, messageName: "wobble") { s, a in try s.wobbleIndex(a) },
        HostFunction("__newindex", .wobbleMeta, messageName: "wobble") { _, a in
            throw SceneError("wobble", "wobble handles are read-only (field \(describeKey(a.lua, 2)))")
        },
    ]

    /// The fields of a wobble model, in the order messages list
    /// them; `live` is read by handles only.
    static let wobbleFieldTable: [WobbleField] = [
        WobbleField(name: "lt") { _, lua, m in lua.push(m.shape.lt) },
        WobbleField(name: "rt") { _, lua, m in lua.push(m.shape.rt) },
        WobbleField(name: "rb") { _, lua, m in lua.push(m.shape.rb) },
        WobbleField(name: "lb") { _, lua, m in lua.push(m.shape.lb) },
        WobbleField(name: "center") { _, lua, m in lua.push(m.shape.center) },
        WobbleField(name: "direction") { s, lua, m in lua.push(m.state(at: s.scene.now).direction) },
        WobbleField(name: "amplitude") { s, lua, m in lua.push(m.state(at: s.scene.now).amplitude) },
        WobbleField(name: "lastAnimationBeginTime") { s, lua, m in lua.push(m.state(at: s.scene.now).cycleStart) },
    ]
    /// Fields of wobble handles.
    static let wobbleFields = wobbleFieldTable.map(\.name) + ["live"]

    /// `prepare()` → array of wobble handles.
    func prepare(_ a: LuaArgs) -> Int32 {
        placeAddedSketches()
        prepared = true
        let models = scene.prepare()
        pushWobbles(a.lua, models)
        return 1
    }

    private func pushWobbles(_ lua: LuaStack, _ models: [WobbleModel]) {
        lua.newTable(array: Int32(clamping: models.count))
        for (i, m) in models.enumerated() {
            pushWobble(lua, m)
            lua.rawSet(-2, i + 1)
        }
    }

    /// `wobbleModels()` → array of `{lt, rt, rb, lb, center, direction,
    /// amplitude, lastAnimationBeginTime}` at the current time.
    func wobbleModels(_ a: LuaArgs) -> Int32 {
        let lua = a.lua
        let models = scene.models
        lua.newTable(array: Int32(clamping: models.count))
        for (i, m) in models.enumerated() {
            lua.newTable(record: Int32(ScriptSession.wobbleFieldTable.count))
            for field in ScriptSession.wobbleFieldTable {
                field.push(self, lua, m)
                lua.rawSet(-2, field.name)
            }
            lua.rawSet(-2, i + 1)
        }
        return 1
    }

    /// Wobble handle fields (read-only).
    func wobbleIndex(_ a: LuaArgs) throws -> Int32 {
        let lua = a.lua
        guard let m = lua.handleObject(1, kind: .wobble) as? WobbleModel else { throw a.typeError(1, "wobble") }
        let key = lua.string(2)
        if let field = ScriptSession.wobbleFieldTable.first(where: { $0.name == key }) {
            field.push(self, lua, m)
        } else if key == "live" {
            lua.push(scene.isLive(m))
        } else {
            throw SceneError("wobble", "no field \(describeKey(lua, 2)) (fields: \(ScriptSession.wobbleFields.joined(separator: ", ")))")
        }
        return 1
    }

    /// The model an `impulse` target names: nil for every live model.
    private func target(_ a: LuaArgs, _ i: Int32) throws -> WobbleModel? {
        let lua = a.lua
        switch lua.type(i) {
        case .none, .nil:
            return nil
        case .number:
            let n = try a.integer(i)
            let models = scene.models
            guard n >= 1, n <= models.count else {
                throw SceneError(a.function, "no live wobble model #\(n) (there \(models.count == 1 ? "is 1" : "are \(models.count)"))")
            }
            return models[n - 1]
        default:
            if let m = lua.handleObject(i, kind: .wobble) as? WobbleModel { return m }
            if let s = lua.handleObject(i, kind: .sketch) as? Sketch {
                guard let m = scene.model(for: s) else {
                    throw SceneError(a.function, "sketch #\(s.id) has not been prepared (call prepare() first)")
                }
                return m
            }
            throw a.typeError(i, "wobble, sketch, index or nil")
        }
    }

    /// `impulse(target, dx, dy [, amplitude = 1])`.
    func impulse(_ a: LuaArgs) throws -> Int32 {
        if isRemovedKick(a.lua) { return 0 }
        let t = try target(a, 1)
        let dx = try a.number(2), dy = try a.number(3)
        let amplitude = try a.optionalNumber(4) ?? 1
        try scene.impulse(t, dx: dx, dy: dy, amplitude: amplitude)
        noteKick("impulse", a.lua)
        return 0
    }

    /// `perform{ {t, touch = {x0, y0, x1, y1}}, {t, shake = {ax, ay}}, ... }`:
    /// pokes and shakes at clip times `t` (seconds), applied as the clock
    /// reaches each (what the studio's `B` writes from a take).
    func perform(_ a: LuaArgs) throws -> Int32 {
        let events = try PerformTable.read(a, 1)
        if caller(a.lua).file == nil { scenePerformed += events }
        // The studio's pending bake replaces the scene's own list.
        if options.sketchEdits.baked != nil { return 0 }
        try scene.schedule(events)
        return 0
    }

    /// `touch(x0, y0, x1, y1)` → the model hit, or nil.
    func touch(_ a: LuaArgs) throws -> Int32 {
        if isRemovedKick(a.lua) { a.lua.pushNil(); return 1 }
        let x0 = try a.number(1), y0 = try a.number(2), x1 = try a.number(3), y1 = try a.number(4)
        noteKick("touch", a.lua)
        if let hit = try scene.touch(from: Point(x0, y0), to: Point(x1, y1)) {
            pushWobble(a.lua, hit)
        } else {
            if x0 != x1 || y0 != y1, warnings.count < 100 {
                let at = a.lua.callerLine.map { "\(options.scriptPath):\($0): " } ?? "\(options.scriptPath): "
                let why = !scene.models.isEmpty ? "no live region contains the start point"
                    : prepared ? "the scene has no region (prepare() found no sketch to make live)" : "there is no live region (prepare() first)"
                warnings.append("\(at)touch at (\(NumberText.plain(x0)), \(NumberText.plain(y0))) hits nothing: \(why)")
            }
            a.lua.pushNil()
        }
        return 1
    }
}
