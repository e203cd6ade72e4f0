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
        scene.enableMotion(trace: samples)
        return 0
    }

    /// `shake(ax, ay)`.
    func shake(_ a: LuaArgs) throws -> Int32 {
        let ax = try a.number(1), ay = try a.number(2)
        try scene.shake(ax: ax, ay: ay)
        return 0
    }
}
