import WobbleCore

/// The Lua API, as data: Lua name → Swift function, one table
/// per Lua type in its own file (as LÖVE's `wrap_<Type>.cpp`):
///
/// - `SceneAPI.swift`: the scene and its clock (`image`, `fps`, `overlap`,
///   `edges`, `wait`, `untilStill`, …);
/// - `SketchAPI.swift`: the control layer and sketch handles, with the one
///   table of their keys (`addSketch{...}`, fields, parameters);
/// - `WobbleAPI.swift`: the effect layer and wobble handles, with the one
///   table of their fields;
/// - `MotionAPI.swift`: the accelerometer (`enableMotion`, `shake`);
/// - `SoundAPI.swift`: sounds and the soundtrack (`sound`, `soundtrack`,
///   sound handles: `duration`, `onsets`, `beats`, `tempo`, `level`);
/// - `HandleAPI.swift`: what every handle does (`tostring`, `==`).
///
/// Each binding checks its arguments, calls the scene, pushes results.
extension ScriptSession {
    static let api: [HostFunction] = sceneAPI + sketchAPI + wobbleAPI + motionAPI + soundAPI + handleAPI + [
        // Sandbox
        HostFunction("resolve", .sandbox) { s, a in try s.sandboxResolve(a) },
        HostFunction("redact", .sandbox) { s, a in s.sandboxRedact(a) },
        HostFunction("record", .sandbox) { s, a in s.sandboxRecord(a) },
    ]
}
