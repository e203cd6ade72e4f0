import WobbleCore

/// The accelerometer: `enableMotion([trace])`, `shake(ax, ay)`.
extension ScriptSession {
    static let motionAPI: [HostFunction] = [
        HostFunction("enableMotion") { s, a in try s.enableMotion(a) },
        HostFunction("shake") { s, a in try s.shake(a) },
    ]

    /// `enableMotion([trace])`: a CSV trace is read relative to the script's folder.
    func enableMotion(_ a: LuaArgs) throws -> Int32 {
        var samples: [MotionSample] = []
        if !a.isNil(1) {
            samples = try readTrace(try a.path(1))
        }
        let start = scene.now
        scene.enableMotion(trace: samples)
        for s in samples.prefix(ScriptSession.maxKicks) where s.time.isFinite { noteKick("trace sample", a.lua, at: start + s.time) }
        return 0
    }

    /// `shake(ax, ay)`.
    func shake(_ a: LuaArgs) throws -> Int32 {
        if isRemovedKick(a.lua) { return 0 }
        let ax = try a.number(1), ay = try a.number(2)
        try scene.shake(ax: ax, ay: ay)
        noteKick("shake", a.lua)
        return 0
    }
}
