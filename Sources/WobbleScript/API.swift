import WobbleCore

/// The Lua API of SPEC §3, as data: Lua name → Swift function. Each
/// binding checks its arguments, calls the scene, pushes results.
extension ScriptSession {
    static let api: [HostFunction] = [
        // Scene
        HostFunction("image") { s, a in try s.image(a) },
        HostFunction("size") { s, a in try s.size(a) },
        HostFunction("fps") { s, a in try s.fps(a) },
        HostFunction("output") { s, a in try s.output(a) },
        // Control layer
        HostFunction("addSketch") { s, a in try s.addSketch(a) },
        HostFunction("sketchModels") { s, a in s.sketchModels(a) },
        HostFunction("clear") { s, _ in s.scene.clear(); return 0 },
        // Effect layer
        HostFunction("prepare") { s, a in s.prepare(a) },
        HostFunction("wobbleModels") { s, a in s.wobbleModels(a) },
        HostFunction("impulse") { s, a in try s.impulse(a) },
        HostFunction("touch") { s, a in try s.touch(a) },
        HostFunction("enableMotion") { s, a in try s.enableMotion(a) },
        HostFunction("shake") { s, a in try s.shake(a) },
        HostFunction("reset") { s, _ in s.scene.reset(); return 0 },
        // Overlay
        HostFunction("overlay") { s, a in s.scene.overlay = try a.boolean(1); return 0 },
        // Time
        HostFunction("wait") { s, a in try s.scene.wait(try a.number(1)); return 0 },
        HostFunction("time") { s, a in a.lua.push(s.scene.now); return 1 },
        HostFunction("untilStill") { s, a in try s.untilStill(a) },

        // Sketch handles
        HostFunction("topLineCenter", .sketchMethod) { s, a in try s.sketchMidpoint(a) { $0.topMid } },
        HostFunction("leftLineCenter", .sketchMethod) { s, a in try s.sketchMidpoint(a) { $0.leftMid } },
        HostFunction("bottomLineCenter", .sketchMethod) { s, a in try s.sketchMidpoint(a) { $0.bottomMid } },
        HostFunction("rightLineCenter", .sketchMethod) { s, a in try s.sketchMidpoint(a) { $0.rightMid } },
        HostFunction("contains", .sketchMethod) { s, a in try s.sketchContains(a) },
        HostFunction("__index", .sketchMeta, messageName: "sketch") { s, a in try s.sketchIndex(a) },
        HostFunction("__newindex", .sketchMeta, messageName: "sketch") { s, a in try s.sketchNewIndex(a) },
        HostFunction("__tostring", .sketchMeta, messageName: "tostring") { s, a in s.handleToString(a) },
        HostFunction("__eq", .sketchMeta) { s, a in s.handleEquals(a) },
        HostFunction("__gc", .sketchMeta) { _, a in a.lua.releaseHandle(1); return 0 },

        // Wobble handles
        HostFunction("__index", .wobbleMeta, messageName: "wobble") { s, a in try s.wobbleIndex(a) },
        HostFunction("__newindex", .wobbleMeta, messageName: "wobble") { _, a in
            throw SceneError("wobble", "wobble handles are read-only (field \(describeKey(a.lua, 2)))")
        },
        HostFunction("__tostring", .wobbleMeta, messageName: "tostring") { s, a in s.handleToString(a) },
        HostFunction("__eq", .wobbleMeta) { s, a in s.handleEquals(a) },
        HostFunction("__gc", .wobbleMeta) { _, a in a.lua.releaseHandle(1); return 0 },

        // Sandbox
        HostFunction("resolve", .sandbox) { s, a in try s.sandboxResolve(a) },
    ]

    /// Keys of `addSketch{...}`.
    static let sketchKeys = ["lt", "rt", "rb", "lb", "center", "x", "y", "w", "h",
                             "duration", "decay", "threshold", "strength"]
    /// Fields of sketch handles.
    static let sketchFields = ["lt", "rt", "rb", "lb", "center", "duration", "decay", "threshold", "strength"]
    /// Fields of wobble handles.
    static let wobbleFields = ["lt", "rt", "rb", "lb", "center", "direction", "amplitude",
                               "lastAnimationBeginTime", "live"]

    // MARK: Scene

    /// `image(path)` → `width, height`.
    func image(_ a: LuaArgs) throws -> Int32 {
        let path = try a.path(1)
        let size: (width: Int, height: Int)
        if let o = options.imageOverride {
            size = o
        } else {
            let full = resolve(path)
            if let current = imagePath, current == full, let known = scene.imageSize {
                size = known
            } else {
                if scene.hasRecordedFrame {
                    throw SceneError("image", "cannot change the image to '\(path)' once a frame has been recorded")
                }
                let loaded: (width: Int, height: Int)
                do {
                    loaded = try options.imageLoader(full)
                } catch {
                    throw SceneError("image", "\(error)")
                }
                guard loaded.width > 0, loaded.height > 0 else {
                    throw SceneError("image", "'\(path)' has no pixels (\(loaded.width)×\(loaded.height))")
                }
                size = loaded
                imagePath = full
            }
        }
        scene.imageSize = size
        a.lua.push(size.width)
        a.lua.push(size.height)
        return 2
    }

    /// `size()` → `width, height`.
    func size(_ a: LuaArgs) throws -> Int32 {
        guard let size = scene.imageSize else {
            throw SceneError("size", "no image yet: call image(path) first (or pass --image)")
        }
        a.lua.push(size.width)
        a.lua.push(size.height)
        return 2
    }

    /// `fps([n])` → the current rate.
    func fps(_ a: LuaArgs) throws -> Int32 {
        if let n = try a.optionalNumber(1) { try scene.setFPS(n) }
        a.lua.push(scene.fps)
        return 1
    }

    /// `output(path)`: the default output, resolved against the script's folder.
    func output(_ a: LuaArgs) throws -> Int32 {
        let path = try a.path(1)
        scene.outputPath = path
        outputPath = resolve(path)
        return 0
    }

    // MARK: Control layer

    /// `addSketch([spec])` → sketch handle.
    func addSketch(_ a: LuaArgs) throws -> Int32 {
        let lua = a.lua
        guard scene.sketches.count < ScriptSession.maxSketches else {
            throw SceneError("addSketch", "too many sketches (the control layer holds at most \(ScriptSession.maxSketches))")
        }
        var corners = (lt: Point(10, 10), rt: Point(100, 10), rb: Point(100, 100), lb: Point(10, 100))
        var center: Point?
        var parameters = WobbleParameters.original
        if !a.isNil(1) {
            guard lua.type(1) == .table else { throw a.typeError(1, "table") }
            let r = TableReader(lua: lua, function: "addSketch")
            try r.checkKeys(1, valid: ScriptSession.sketchKeys)
            let cornerKeys = ["lt", "rt", "rb", "lb"], rectKeys = ["x", "y", "w", "h"]
            let hasCorners = cornerKeys.filter { r.has(1, $0) }, hasRect = rectKeys.filter { r.has(1, $0) }
            if !hasCorners.isEmpty && !hasRect.isEmpty {
                throw SceneError("addSketch", "give either corners (lt, rt, rb, lb) or a rectangle (x, y, w, h), not both")
            }
            if !hasCorners.isEmpty {
                if let missing = cornerKeys.first(where: { !hasCorners.contains($0) }) {
                    throw SceneError("addSketch", "corners need lt, rt, rb and lb (missing \(missing))")
                }
                corners = (try r.point(1, "lt")!, try r.point(1, "rt")!, try r.point(1, "rb")!, try r.point(1, "lb")!)
            } else if !hasRect.isEmpty {
                if let missing = rectKeys.first(where: { !hasRect.contains($0) }) {
                    throw SceneError("addSketch", "a rectangle needs x, y, w and h (missing \(missing))")
                }
                let x = try r.number(1, "x", finite: true)!, y = try r.number(1, "y", finite: true)!
                let w = try r.number(1, "w", finite: true)!, h = try r.number(1, "h", finite: true)!
                guard w >= 0, h >= 0 else { throw SceneError("addSketch", "w and h must be >= 0") }
                for (key, v) in [("x", x), ("y", y), ("x + w", x + w), ("y + h", y + h)] {   // the corners
                    if let problem = CheckedNumbers.coordinateProblem(v) { throw SceneError("addSketch", "\(key) \(problem)") }
                }
                corners = (Point(x, y), Point(x + w, y), Point(x + w, y + h), Point(x, y + h))
            }
            center = try r.point(1, "center")
            if let v = try r.number(1, "duration") { parameters.duration = v }
            if let v = try r.number(1, "decay") { parameters.decay = v }
            if let v = try r.number(1, "threshold") { parameters.threshold = v }
            if let v = try r.number(1, "strength") { parameters.strength = v }
            if let problem = parameters.validationError() { throw SceneError("addSketch", problem) }
        }
        let s = scene.addSketch(lt: corners.lt, rt: corners.rt, rb: corners.rb, lb: corners.lb,
                                center: center, parameters: parameters)
        pushSketch(lua, s)
        return 1
    }

    /// `sketchModels()` → array of the control layer's sketch handles.
    func sketchModels(_ a: LuaArgs) -> Int32 {
        let sketches = scene.sketches
        a.lua.newTable(array: Int32(clamping: sketches.count))
        for (i, s) in sketches.enumerated() {
            pushSketch(a.lua, s)
            a.lua.rawSet(-2, i + 1)
        }
        return 1
    }

    /// The sketch of the handle at `i` (or an argument error).
    func sketch(_ a: LuaArgs, _ i: Int32) throws -> Sketch {
        guard let s = a.lua.handleObject(i, kind: .sketch) as? Sketch else { throw a.typeError(i, "sketch") }
        return s
    }

    func sketchMidpoint(_ a: LuaArgs, _ f: (RegionShape) -> Point) throws -> Int32 {
        let s = try sketch(a, 1)
        a.lua.push(f(s.shape))
        return 1
    }

    /// `s:contains(x, y)`: the region test of SPEC §5.
    func sketchContains(_ a: LuaArgs) throws -> Int32 {
        let s = try sketch(a, 1)
        let p = Point(try a.finiteNumber(2), try a.finiteNumber(3))
        a.lua.push(s.shape.contains(p))
        return 1
    }

    /// Sketch handle fields and methods.
    func sketchIndex(_ a: LuaArgs) throws -> Int32 {
        let lua = a.lua
        let s = try sketch(a, 1)
        let key = lua.string(2)
        switch key {
        case "lt": lua.push(s.lt)
        case "rt": lua.push(s.rt)
        case "rb": lua.push(s.rb)
        case "lb": lua.push(s.lb)
        case "center": lua.push(s.center)
        case "duration": lua.push(s.parameters.duration)
        case "decay": lua.push(s.parameters.decay)
        case "threshold": lua.push(s.parameters.threshold)
        case "strength": lua.push(s.parameters.strength)
        default:
            if let key {
                lua.rawGet(LuaStack.registry, RegistryKey.sketchMethods)
                if lua.rawGet(-1, key) == .function { return 1 }
            }
            throw SceneError("sketch", "no field \(describeKey(lua, 2)) (fields: \(ScriptSession.sketchFields.joined(separator: ", "));"
                             + " methods: topLineCenter, leftLineCenter, bottomLineCenter, rightLineCenter, contains)")
        }
        return 1
    }

    /// Assigning a sketch handle's fields (points, or `center = nil` for the
    /// automatic center; parameters, validated).
    func sketchNewIndex(_ a: LuaArgs) throws -> Int32 {
        let lua = a.lua
        let s = try sketch(a, 1)
        let r = TableReader(lua: lua, function: "sketch")
        let key = lua.string(2) ?? ""
        switch key {
        case "lt": s.lt = try r.point(3, name: key)
        case "rt": s.rt = try r.point(3, name: key)
        case "rb": s.rb = try r.point(3, name: key)
        case "lb": s.lb = try r.point(3, name: key)
        case "center": s.assignedCenter = a.isNil(3) ? nil : try r.point(3, name: key)
        case "duration", "decay", "threshold", "strength":
            guard let v = lua.number(3) else {
                throw SceneError("sketch", "\(key) must be a number, got \(describe(lua, 3))")
            }
            var p = s.parameters
            switch key {
            case "duration": p.duration = v
            case "decay": p.decay = v
            case "threshold": p.threshold = v
            default: p.strength = v
            }
            if let problem = p.validationError() { throw SceneError("sketch", problem) }
            s.parameters = p
        default:
            throw SceneError("sketch", "no field \(describeKey(lua, 2)) (fields: \(ScriptSession.sketchFields.joined(separator: ", ")))")
        }
        return 0
    }

    /// `tostring(handle)`: `sketch #3`, `wobble #5`, `wobble #5 (not live)`.
    func handleToString(_ a: LuaArgs) -> Int32 {
        let lua = a.lua
        switch lua.handleObject(1, kind: nil) {
        case let s as Sketch: lua.push("sketch #\(s.id)")
        case let m as WobbleModel: lua.push("wobble #\(m.id)\(scene.isLive(m) ? "" : " (not live)")")
        default: lua.push("\(lua.typeName(1)) (released)")
        }
        return 1
    }

    /// `a == b` for handles: the same sketch or model.
    func handleEquals(_ a: LuaArgs) -> Int32 {
        let l = a.lua.handleObject(1, kind: nil), r = a.lua.handleObject(2, kind: nil)
        a.lua.push(l != nil && l === r)
        return 1
    }

    // MARK: Effect layer

    /// `prepare()` → array of wobble handles.
    func prepare(_ a: LuaArgs) -> Int32 {
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
            let st = m.state(at: scene.now)
            lua.newTable(record: 8)
            for (key, p) in [("lt", m.shape.lt), ("rt", m.shape.rt), ("rb", m.shape.rb), ("lb", m.shape.lb),
                             ("center", m.shape.center), ("direction", m.direction)] {
                lua.push(p)
                lua.rawSet(-2, key)
            }
            lua.push(st.amplitude)
            lua.rawSet(-2, "amplitude")
            lua.push(st.cycleStart)
            lua.rawSet(-2, "lastAnimationBeginTime")
            lua.rawSet(-2, i + 1)
        }
        return 1
    }

    /// Wobble handle fields (read-only).
    func wobbleIndex(_ a: LuaArgs) throws -> Int32 {
        let lua = a.lua
        guard let m = lua.handleObject(1, kind: .wobble) as? WobbleModel else { throw a.typeError(1, "wobble") }
        switch lua.string(2) {
        case "lt": lua.push(m.shape.lt)
        case "rt": lua.push(m.shape.rt)
        case "rb": lua.push(m.shape.rb)
        case "lb": lua.push(m.shape.lb)
        case "center": lua.push(m.shape.center)
        case "direction": lua.push(m.direction)
        case "amplitude": lua.push(m.state(at: scene.now).amplitude)
        case "lastAnimationBeginTime": lua.push(m.state(at: scene.now).cycleStart)
        case "live": lua.push(scene.isLive(m))
        default:
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
        let t = try target(a, 1)
        let dx = try a.number(2), dy = try a.number(3)
        let amplitude = try a.optionalNumber(4) ?? 1
        try scene.impulse(t, dx: dx, dy: dy, amplitude: amplitude)
        return 0
    }

    /// `touch(x0, y0, x1, y1)` → the model hit, or nil.
    func touch(_ a: LuaArgs) throws -> Int32 {
        let x0 = try a.number(1), y0 = try a.number(2), x1 = try a.number(3), y1 = try a.number(4)
        if let hit = try scene.touch(from: Point(x0, y0), to: Point(x1, y1)) {
            pushWobble(a.lua, hit)
        } else {
            a.lua.pushNil()
        }
        return 1
    }

    /// `enableMotion([trace])`: a CSV trace is read relative to the script's folder.
    func enableMotion(_ a: LuaArgs) throws -> Int32 {
        var samples: [MotionSample] = []
        if !a.isNil(1) {
            let path = try a.path(1)
            let bytes: [UInt8]
            switch ScriptSession.readFile(resolve(path)) {
            case .success(let b): bytes = b
            case .failure(let e): throw SceneError("enableMotion", "cannot read trace '\(path)': \(e.message)")
            }
            samples = try parseMotionTrace(String(decoding: bytes, as: UTF8.self), fileName: path)
        }
        scene.enableMotion(trace: samples)
        return 0
    }

    /// `shake(ax, ay)`.
    func shake(_ a: LuaArgs) throws -> Int32 {
        let ax = try a.number(1), ay = try a.number(2)
        try scene.shake(ax: ax, ay: ay)
        return 0
    }

    // MARK: Time

    /// `untilStill([maxSeconds])` → true when still.
    func untilStill(_ a: LuaArgs) throws -> Int32 {
        let still = try scene.untilStill(maxSeconds: try a.optionalNumber(1))
        a.lua.push(still)
        return 1
    }
}
