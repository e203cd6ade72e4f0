import WobbleCore

/// The scene and its clock: `image`, `size`, `fps`, `output`, `overlap`,
/// `edges`, `loop`, `overlay`, `wait`, `time`, `untilStill`.
extension ScriptSession {
    static let sceneAPI: [HostFunction] = [
        HostFunction("image") { s, a in try s.image(a) },
        HostFunction("size") { s, a in try s.size(a) },
        HostFunction("fps") { s, a in try s.fps(a) },
        HostFunction("output") { s, a in try s.output(a) },
        HostFunction("overlap") { s, a in try s.scene.setOverlap(try a.choice(1, name: "mode")); return 0 },
        HostFunction("edges") { s, a in try s.scene.setEdges(try a.choice(1, name: "mode")); return 0 },
        HostFunction("loop") { s, _ in
            // The studio switched the loop off (`SketchEdits.loop`), or on
            // before the script ran.
            if s.options.sketchEdits.loop == nil { try s.scene.setLoop() }
            return 0
        },
        HostFunction("overlay") { s, a in s.scene.overlay = try a.boolean(1); return 0 },
        HostFunction("wait") { s, a in
            let seconds = try a.number(1)
            s.placeAddedSketches()
            try s.scene.wait(seconds)
            return 0
        },
        HostFunction("time") { s, a in a.lua.push(s.scene.now); return 1 },
        HostFunction("untilStill") { s, a in try s.untilStill(a) },
    ]

    /// `image(path)` → `width, height`.
    func image(_ a: LuaArgs) throws -> Int32 {
        let path = try a.path(1)
        let size: (width: Int, height: Int)
        if let o = options.imageOverride {
            size = o
        } else {
            let full = try checkedDataPath(path, function: "image")
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
                recordInput(.image, full)
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

    /// `output(path)`: the default output, resolved against the script's
    /// folder; in the sandbox it must stay inside it (`PathPolicy`).
    func output(_ a: LuaArgs) throws -> Int32 {
        let path = try a.path(1)
        outputPath = try checkedOutputPath(path)
        return 0
    }

    /// `untilStill([maxSeconds])` → true when still.
    func untilStill(_ a: LuaArgs) throws -> Int32 {
        placeAddedSketches()
        let start = scene.now
        let still = try scene.untilStill(maxSeconds: try a.optionalNumber(1))
        let (line, file) = caller(a.lua)
        stillWaits.append(StillWait(line: line, file: file, start: start, end: scene.now))
        a.lua.push(still)
        return 1
    }
}
