import WobbleCore

/// A point field of sketch handles and key of `addSketch{...}` (corners).
struct SketchPoint: Sendable {
    let name: String
    let get: @Sendable (Sketch) -> Point
    let set: @Sendable (Sketch, Point) -> Void
}

/// The control layer and sketch handles: `addSketch`, `sketchModels`,
/// `clear`, the handles' fields and methods. Their keys are listed once,
/// in the tables below, for `addSketch{...}`, reading, writing and messages.
extension ScriptSession {
    static let sketchAPI: [HostFunction] = [
        HostFunction("addSketch") { s, a in try s.addSketch(a) },
        HostFunction("sketchModels") { s, a in s.sketchModels(a) },
        HostFunction("clear") { s, _ in s.scene.clear(); return 0 },
        HostFunction("topLineCenter", .sketchMethod) { s, a in try s.sketchMidpoint(a) { $0.topMid } },
        HostFunction("leftLineCenter", .sketchMethod) { s, a in try s.sketchMidpoint(a) { $0.leftMid } },
        HostFunction("bottomLineCenter", .sketchMethod) { s, a in try s.sketchMidpoint(a) { $0.bottomMid } },
        HostFunction("rightLineCenter", .sketchMethod) { s, a in try s.sketchMidpoint(a) { $0.rightMid } },
        HostFunction("contains", .sketchMethod) { s, a in try s.sketchContains(a) },
        HostFunction("__index", .sketchMeta, messageName: "sketch") { s, a in try s.sketchIndex(a) },
        HostFunction("__newindex", .sketchMeta, messageName: "sketch") { s, a in try s.sketchNewIndex(a) },
    ]

    /// The corners (`center` is a field too, but may be assigned nil).
    static let sketchCorners: [SketchPoint] = [
        SketchPoint(name: "lt", get: { $0.lt }, set: { $0.lt = $1 }),
        SketchPoint(name: "rt", get: { $0.rt }, set: { $0.rt = $1 }),
        SketchPoint(name: "rb", get: { $0.rb }, set: { $0.rb = $1 }),
        SketchPoint(name: "lb", get: { $0.lb }, set: { $0.lb = $1 }),
    ]
    /// The number parameters of every model the scene may name (after
    /// `motion`, a name), as the models' tables declare them.
    var sketchParameters: [MotionParameter] { options.motions.parameters }
    /// The rectangle shorthand of `addSketch{x =, y =, w =, h =}`.
    static let rectKeys = ["x", "y", "w", "h"]
    /// Keys of `addSketch{...}`.
    var sketchKeys: [String] {
        ScriptSession.sketchCorners.map(\.name) + ["center"] + ScriptSession.rectKeys + ["motion"] + sketchParameters.map(\.key) + ["pin", "cutout"]
    }
    /// Fields of sketch handles.
    var sketchFields: [String] { ScriptSession.sketchCorners.map(\.name) + ["center", "motion"] + sketchParameters.map(\.key) + ["pin"] }
    /// Methods of sketch handles, for messages.
    static let sketchMethodNames = sketchAPI.filter { $0.role == .sketchMethod }.map(\.name)

    /// `addSketch([spec])` → sketch handle.
    func addSketch(_ a: LuaArgs) throws -> Int32 {
        let lua = a.lua
        guard scene.sketches.count < ScriptSession.maxSketches else {
            throw SceneError("addSketch", "too many sketches (the control layer holds at most \(ScriptSession.maxSketches))")
        }
        var corners = [Point(10, 10), Point(100, 10), Point(100, 100), Point(10, 100)]
        var center: Point?
        let catalog = options.motions
        var parameters = catalog.defaults(catalog.models[0].kind)
        var cutout: String?
        if !a.isNil(1) {
            guard lua.type(1) == .table else { throw a.typeError(1, "table") }
            let r = TableReader(lua: lua, function: "addSketch")
            try r.checkKeys(1, valid: sketchKeys)
            let cornerKeys = ScriptSession.sketchCorners.map(\.name), rectKeys = ScriptSession.rectKeys
            let hasCorners = cornerKeys.filter { r.has(1, $0) }, hasRect = rectKeys.filter { r.has(1, $0) }
            if !hasCorners.isEmpty && !hasRect.isEmpty {
                throw SceneError("addSketch", "give either corners (lt, rt, rb, lb) or a rectangle (x, y, w, h), not both")
            }
            if !hasCorners.isEmpty {
                if let missing = cornerKeys.first(where: { !hasCorners.contains($0) }) {
                    throw SceneError("addSketch", "corners need lt, rt, rb and lb (missing \(missing))")
                }
                corners = try cornerKeys.map { key in
                    guard let p = try r.point(1, key) else { throw SceneError("addSketch", "corners need \(key)") }
                    return p
                }
            } else if !hasRect.isEmpty {
                if let missing = rectKeys.first(where: { !hasRect.contains($0) }) {
                    throw SceneError("addSketch", "a rectangle needs x, y, w and h (missing \(missing))")
                }
                let v = try rectKeys.map { key in
                    guard let x = try r.number(1, key, finite: true) else { throw SceneError("addSketch", "a rectangle needs \(key)") }
                    return x
                }
                let (x, y, w, h) = (v[0], v[1], v[2], v[3])
                guard w >= 0, h >= 0 else { throw SceneError("addSketch", "w and h must be >= 0") }
                for (key, v) in [("x", x), ("y", y), ("x + w", x + w), ("y + h", y + h)] {   // the corners
                    if let problem = CheckedNumbers.coordinateProblem(v) { throw SceneError("addSketch", "\(key) \(problem)") }
                }
                corners = [Point(x, y), Point(x + w, y), Point(x + w, y + h), Point(x, y + h)]
            }
            center = try r.point(1, "center")
            if let motion = try r.motion(1, "motion", among: catalog) {
                parameters = catalog.defaults(motion)
            }
            for p in sketchParameters {
                let models = catalog.models(having: p.key)
                if !models.contains(parameters.motion), r.has(1, p.key) {
                    let only = models.map { "motion = \"\($0.rawValue)\"" }.joined(separator: " or ")
                    throw SceneError("addSketch", "\(p.key) applies to \(only) only (this sketch's motion is \"\(parameters.motion.rawValue)\")")
                }
                if let v = try r.number(1, p.key) { p.set(&parameters, v) }
            }
            if let problem = catalog.validationError(parameters) { throw SceneError("addSketch", problem) }
            parameters.pin = try r.choice(1, "pin", of: PinSide.self)
            cutout = try r.string(1, "cutout", expected: "\"auto\" or a mask image's path")
        }
        let ordinal = sketchCalls.count
        let position = lua.callerPosition()
        let own = SketchPoints(lt: corners[0], rt: corners[1], rb: corners[2], lb: corners[3], center: center)
        // The call's own sketch keeps its own cutout (the studio's base).
        parameters.cutout = try cutout.map { try cutoutRequest($0, shape: own.shape, position: position) }
        sketchCalls.append(SketchCall(source: position?.source, line: position?.line, points: own, parameters: parameters))
        // Deleted in the studio: no sketch (the call still counts, so the
        // calls after it keep their numbers); nil for a name nothing uses.
        if options.sketchEdits.deleted.contains(ordinal) { return 0 }
        let edited = options.sketchEdits.calls[ordinal]
        let p = edited?.points ?? own
        // An edit's cutout (the studio's mask, or none) stands for the
        // call's own; either is made for the sketch as it is now.
        if let edited { parameters = edited.parameters }
        let line = position.flatMap { $0.source == "@" + options.scriptPath ? $0.line : nil }
        parameters.cutout = parameters.cutout.map { CutoutRequest(source: $0.source, shape: p.shape, place: $0.place) }
        if let pin = parameters.pin,
           let problem = RegionShape(lt: p.lt, rt: p.rt, rb: p.rb, lb: p.lb, center: p.center ?? .zero).pinProblem(pin) {
            throw SceneError("addSketch", problem)
        }
        let s = scene.addSketch(lt: p.lt, rt: p.rt, rb: p.rb, lb: p.lb, center: p.center, parameters: parameters,
                                origin: SketchOrigin(.call(ordinal), line: line))
        pushSketch(lua, s)
        return 1
    }

    /// `addSketch{cutout = "auto" | "PATH"}` as a request for the engine,
    /// which makes the mask and plate once the script has run: a path is
    /// resolved and sandboxed like `image()`'s and recorded as an input (no
    /// output may replace it; a watcher watches it).
    func cutoutRequest(_ text: String, shape: RegionShape, position: (source: String, line: Int)?) throws -> CutoutRequest {
        let source: CutoutSource
        if text == "auto" {
            source = .auto
        } else {
            let full = try checkedDataPath(text, function: "addSketch")
            recordInput(.mask, full)
            source = .file(path: full, written: text)
        }
        let place = position.map { p in (p.source.hasPrefix("@") ? String(p.source.dropFirst()) : p.source) + ":\(p.line)" }
        return CutoutRequest(source: source, shape: shape, place: place)
    }

    /// Puts the studio's added sketches on the control layer (once a run:
    /// at the first `prepare()`, `wait` or `untilStill`, or the script's end).
    func placeAddedSketches() {
        guard !addedPlaced else { return }
        addedPlaced = true
        for (i, a) in options.sketchEdits.added.enumerated() where scene.sketches.count < ScriptSession.maxSketches {
            let p = a.points
            // A pin the shape cannot take is left off (the inspector says why).
            var parameters = a.parameters
            if let pin = parameters.pin, p.shape.pinProblem(pin) != nil { parameters.pin = nil }
            parameters.cutout = parameters.cutout.map { CutoutRequest(source: $0.source, shape: p.shape, place: $0.place) }
            scene.addSketch(lt: p.lt, rt: p.rt, rb: p.rb, lb: p.lb, center: p.center, parameters: parameters,
                            origin: SketchOrigin(.added(i)))
        }
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

    /// `s:contains(x, y)`: the region test of the wobble model.
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
        if let c = ScriptSession.sketchCorners.first(where: { $0.name == key }) {
            lua.push(c.get(s))
        } else if key == "center" {
            lua.push(s.center)
        } else if key == "motion" {
            lua.push(s.parameters.motion.rawValue)
        } else if key == "pin" {
            if let pin = s.parameters.pin { lua.push(pin.rawValue) } else { lua.pushNil() }
        } else if let p = sketchParameters.first(where: { $0.key == key }) {
            lua.push(p.get(s.parameters))
        } else {
            if let key {
                lua.rawGet(LuaStack.registry, RegistryKey.sketchMethods)
                if lua.rawGet(-1, key) == .function { return 1 }
            }
            throw SceneError("sketch", "no field \(describeKey(lua, 2)) (fields: \(sketchFields.joined(separator: ", "));"
                             + " methods: \(ScriptSession.sketchMethodNames.joined(separator: ", ")))")
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
        if let c = ScriptSession.sketchCorners.first(where: { $0.name == key }) {
            // A pin is checked on every change of a corner as on a change
            // of the pin (either order of `r.pin = "bottom"` and
            // `r.lb = r.rb` is the same error); a refused corner stays.
            let old = c.get(s)
            c.set(s, try r.point(3, name: key))
            if let pin = s.parameters.pin, let problem = s.shape.pinProblem(pin) {
                c.set(s, old)
                throw SceneError("sketch", problem)
            }
        } else if key == "center" {
            s.assignedCenter = a.isNil(3) ? nil : try r.point(3, name: key)
        } else if key == "motion" {
            // A parameter left at the old model's default follows the model.
            s.parameters = s.parameters.switching(to: try r.motion(3, name: key, among: options.motions))
        } else if key == "pin" {
            let pin: PinSide? = a.isNil(3) ? nil : try r.choice(3, name: key)
            if let pin, let problem = s.shape.pinProblem(pin) { throw SceneError("sketch", problem) }
            s.parameters.pin = pin
        } else if let field = sketchParameters.first(where: { $0.key == key }) {
            guard let v = lua.number(3) else {
                throw SceneError("sketch", "\(key) must be a number, got \(describe(lua, 3))")
            }
            var p = s.parameters
            field.set(&p, v)
            if let problem = options.motions.validationError(p) { throw SceneError("sketch", problem) }
            s.parameters = p
        } else {
            throw SceneError("sketch", "no field \(describeKey(lua, 2)) (fields: \(sketchFields.joined(separator: ", ")))")
        }
        return 0
    }
}
