import WobbleCore

/// What every handle (sketch, wobble) does: `tostring`, `==`.
extension ScriptSession {
    static let handleAPI: [HostFunction] = [
        HostFunction("__tostring", .sketchMeta, messageName: "tostring") { s, a in s.handleToString(a) },
        HostFunction("__eq", .sketchMeta) { s, a in s.handleEquals(a) },
        HostFunction("__gc", .sketchMeta) { _, a in a.lua.releaseHandle(1); return 0 },
        HostFunction("__tostring", .wobbleMeta, messageName: "tostring") { s, a in s.handleToString(a) },
        HostFunction("__eq", .wobbleMeta) { s, a in s.handleEquals(a) },
        HostFunction("__gc", .wobbleMeta) { _, a in a.lua.releaseHandle(1); return 0 },
    ]

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
}
