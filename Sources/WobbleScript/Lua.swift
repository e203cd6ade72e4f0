// The one Swift file that calls Lua's C API (C stays at the edge: one Swift file per C library). Everything
// else in WobbleScript works through `LuaStack`, whose calls never raise a
// Lua error (habit 3): only raw gets and sets, type checks and pushes.
// Pushes allocate, but the allocator installed by the shim never fails
// while a host function runs, so no longjmp can cross a Swift frame.
internal import CLua
internal import CWobbleLuaShim
import WobbleCore
import WobbleSystem

/// A Lua value type (`LUA_T*`).
enum LuaType: Int32 {
    case none = -1
    case `nil` = 0
    case boolean = 1
    case lightUserdata = 2
    case number = 3
    case string = 4
    case table = 5
    case function = 6
    case userdata = 7
    case thread = 8
}

/// The kind of a handle userdata.
enum HandleKind: Int32 {
    case sketch = 1     // WOBBLE_HANDLE_SKETCH
    case wobble = 2     // WOBBLE_HANDLE_WOBBLE
    case sound = 3      // WOBBLE_HANDLE_SOUND
}

/// A standard library opener (`luaopen_*`).
enum LuaLibrary {
    case base, string, table, math, utf8, coroutine, os, debug

    fileprivate var opener: lua_CFunction {
        switch self {
        case .base: return luaopen_base
        case .string: return luaopen_string
        case .table: return luaopen_table
        case .math: return luaopen_math
        case .utf8: return luaopen_utf8
        case .coroutine: return luaopen_coroutine
        case .os: return luaopen_os
        case .debug: return luaopen_debug
        }
    }
}

/// Why the count hook stopped the script.
enum LuaStop {
    case none, timeout, interrupted
}

/// A view of one Lua stack (the state a host function was called with, or
/// the main state during setup). None of its methods raises a Lua error.
struct LuaStack {
    let state: OpaquePointer

    init(_ state: OpaquePointer) { self.state = state }

    // MARK: Stack

    var top: Int32 { lua_gettop(state) }

    /// The chunk name and current line of the Lua function that called the
    /// running host function (stack level 1); nil when that caller is not
    /// a Lua function (`pcall(addSketch, ...)`) or has no line.
    func callerPosition() -> (source: String, line: Int)? {
        var ar = lua_Debug()
        guard lua_getstack(state, 1, &ar) != 0, lua_getinfo(state, "Sl", &ar) != 0 else { return nil }
        guard ar.currentline > 0, let src = ar.source else { return nil }
        // The chunk name is `@` and the file's bytes (`PathBytes`, as the
        // script's path is compared with it).
        let bytes = UnsafeRawPointer(src).assumingMemoryBound(to: UInt8.self)
        var n = 0
        while bytes[n] != 0 { n += 1 }
        return (PathBytes.string(UnsafeBufferPointer(start: bytes, count: n)), Int(ar.currentline))
    }
    func setTop(_ n: Int32) { lua_settop(state, n) }
    func pop(_ n: Int32 = 1) { wobble_pop(state, n) }
    func absIndex(_ i: Int32) -> Int32 { lua_absindex(state, i) }
    func pushValue(_ i: Int32) { lua_pushvalue(state, i) }
    func remove(_ i: Int32) { wobble_remove(state, i) }
    func insert(_ i: Int32) { wobble_insert(state, i) }
    /// Makes room for `n` more values; false when the stack cannot grow.
    func checkStack(_ n: Int32) -> Bool { lua_checkstack(state, n) != 0 }
    static var registry: Int32 { wobble_registryindex() }

    // MARK: Reading (no conversions, no metamethods)

    func type(_ i: Int32) -> LuaType { LuaType(rawValue: lua_type(state, i)) ?? .none }

    /// The type name Lua's own messages use (`no value`, `nil`, `string`…),
    /// or the handle kind (`sketch`, `wobble`) for handles.
    func typeName(_ i: Int32) -> String {
        if let h = wobble_tohandle(state, i, 0) {
            switch HandleKind(rawValue: h.pointee.kind) {
            case .sketch: return "sketch"
            case .wobble: return "wobble"
            case .sound, nil: return "sound"
            }
        }
        return String(cString: lua_typename(state, lua_type(state, i)))
    }

    /// The number at `i`, only when it is a number (strings are not converted).
    func number(_ i: Int32) -> Double? {
        guard type(i) == .number else { return nil }
        return wobble_tonumberx(state, i, nil)
    }

    /// The number at `i` when it has an exact integer representation.
    func integer(_ i: Int32) -> Int? {
        guard type(i) == .number else { return nil }
        var ok: Int32 = 0
        let v = wobble_tointegerx(state, i, &ok)
        return ok != 0 ? Int(v) : nil
    }

    /// The string at `i`, only when it is a string (numbers are not
    /// converted: that would change the stack slot and allocate).
    func string(_ i: Int32) -> String? {
        guard type(i) == .string else { return nil }
        var len = 0
        guard let p = lua_tolstring(state, i, &len) else { return nil }
        return p.withMemoryRebound(to: UInt8.self, capacity: len) {
            String(decoding: UnsafeBufferPointer(start: $0, count: len), as: UTF8.self)
        }
    }

    /// The string at `i` as a file name: its exact bytes, with those that
    /// are not UTF-8 escaped (`PathBytes`), so a name round-trips to the
    /// system unchanged (`string(i)` would replace them with U+FFFD).
    func pathString(_ i: Int32) -> String? {
        guard type(i) == .string else { return nil }
        var len = 0
        guard let p = lua_tolstring(state, i, &len) else { return nil }
        return p.withMemoryRebound(to: UInt8.self, capacity: len) {
            PathBytes.string(UnsafeBufferPointer(start: $0, count: len))
        }
    }

    /// The string at `i` as a message (Lua's error text): bytes that are
    /// not UTF-8 escaped as in `pathString`, its lines kept
    /// (`PathBytes.text`).
    func messageString(_ i: Int32) -> String? {
        guard type(i) == .string else { return nil }
        var len = 0
        guard let p = lua_tolstring(state, i, &len) else { return nil }
        return p.withMemoryRebound(to: UInt8.self, capacity: len) {
            PathBytes.text(UnsafeBufferPointer(start: $0, count: len))
        }
    }

    func boolean(_ i: Int32) -> Bool { lua_toboolean(state, i) != 0 }

    func rawEqual(_ a: Int32, _ b: Int32) -> Bool { lua_rawequal(state, a, b) != 0 }

    // MARK: Pushing

    func pushNil() { lua_pushnil(state) }
    func push(_ v: Double) { lua_pushnumber(state, v) }
    func push(_ v: Int) { lua_pushinteger(state, lua_Integer(v)) }
    func push(_ v: Bool) { lua_pushboolean(state, v ? 1 : 0) }
    /// Pushes a string as the bytes it stands for: every Swift string that
    /// crosses into Lua goes through here, so a byte the program holds
    /// escaped (`PathBytes`: a byte that is not UTF-8, or a control
    /// character such as a tab or a newline, from the command line or a
    /// file name) reaches the script as that one byte, never as the four
    /// bytes of its private-use code point.
    func push(_ s: String) {
        let b = PathBytes.bytes(s)
        b.withUnsafeBufferPointer { buf in
            buf.withMemoryRebound(to: CChar.self) { c in _ = lua_pushlstring(state, c.baseAddress, c.count) }
        }
    }
    /// Pushes a file name as its exact bytes (the inverse of `pathString`).
    func pushPath(_ s: String) { push(s) }
    func newTable(array: Int32 = 0, record: Int32 = 0) { wobble_newtable(state, array, record) }
    /// Pushes a C closure calling host function `index` through the trampoline.
    func pushHostFunction(_ index: Int) { wobble_push_hostfunction(state, lua_Integer(index)) }
    func pushGlobalTable() { wobble_pushglobaltable(state) }

    // MARK: Raw table access

    /// `t[key] = top`, raw; pops the value.
    func rawSet(_ t: Int32, _ key: String) {
        let t = absIndex(t)
        push(key)
        insert(-2)
        lua_rawset(state, t)
    }
    /// `t[n] = top`, raw; pops the value.
    func rawSet(_ t: Int32, _ n: Int) { lua_rawseti(state, absIndex(t), lua_Integer(n)) }
    /// Pushes `t[key]`, raw, and returns its type.
    @discardableResult
    func rawGet(_ t: Int32, _ key: String) -> LuaType {
        let t = absIndex(t)
        push(key)
        return LuaType(rawValue: lua_rawget(state, t)) ?? .nil
    }
    /// Pushes `t[n]`, raw, and returns its type.
    @discardableResult
    func rawGet(_ t: Int32, _ n: Int) -> LuaType {
        LuaType(rawValue: lua_rawgeti(state, absIndex(t), lua_Integer(n))) ?? .nil
    }
    /// `lua_next`: with a key on top, pushes the next key and value.
    func next(_ t: Int32) -> Bool { lua_next(state, t) != 0 }
    /// The raw length of the table at `t`.
    func rawLength(_ t: Int32) -> Int { Int(lua_rawlen(state, t)) }

    /// Sets the table on top as the metatable of the value at `i` (raw: no
    /// `__metatable` check); pops it.
    func setMetatable(_ i: Int32) { lua_setmetatable(state, i) }

    // MARK: Handles

    /// Pushes a new handle userdata holding a retained `object` (no metatable yet).
    func pushNewHandle(_ object: AnyObject, kind: HandleKind) {
        let p = Unmanaged.passRetained(object).toOpaque()
        _ = wobble_newhandle(state, p, kind.rawValue)
    }

    /// The object of the handle at `i`, if it is a live handle of `kind`
    /// (nil: any kind).
    func handleObject(_ i: Int32, kind: HandleKind?) -> AnyObject? {
        guard let h = wobble_tohandle(state, i, kind?.rawValue ?? 0), h.pointee.released == 0,
              let p = h.pointee.object else { return nil }
        return Unmanaged<AnyObject>.fromOpaque(p).takeUnretainedValue()
    }

    /// `__gc`: releases the object of the handle at `i` (once).
    func releaseHandle(_ i: Int32) {
        guard let h = wobble_tohandle(state, i, 0), h.pointee.released == 0, let p = h.pointee.object else { return }
        h.pointee.released = 1
        h.pointee.object = nil
        Unmanaged<AnyObject>.fromOpaque(p).release()
    }

    // MARK: Loading and calling (setup and script entry only)

    /// Opens one standard library in protected mode and leaves its table on top.
    func openLibrary(_ lib: LuaLibrary) -> Bool {
        wobble_pushcfunction(state, lib.opener)
        return wobble_pcall(state, 0, 1, 0) == LUA_OK
    }

    /// `luaL_openlibs` (--allow-io). Only raises on out-of-memory at setup,
    /// which the panic handler reports.
    func openAllLibraries() { luaL_openlibs(state) }

    /// Pushes `load` restricted to text chunks; the original `load` must be on top.
    func pushTextLoad() { wobble_push_textload(state) }

    /// Pushes `xpcall` whose handler is skipped once the script is stopped;
    /// the original `xpcall` must be on top.
    func pushStoppableXpcall() { wobble_push_xpcall(state) }

    /// Pushes `setmetatable` refusing `__gc`; the original must be on top.
    func pushSandboxSetmetatable() { wobble_push_setmetatable(state) }

    /// Pushes a `print` writing to stderr.
    func pushPrint(toStdout: Bool) { wobble_push_print(state, toStdout ? 1 : 0) }
    /// The script line that called the running host function (nil: none).
    var callerLine: Int? { let n = wobble_caller_line(state); return n > 0 ? Int(n) : nil }

    /// Loads a file as a text chunk named `@path`; pushes the function or
    /// the error message. Returns true on success.
    func loadFile(_ path: String) -> (ok: Bool, fileError: Bool) {
        let status = PathBytes.withCString(path) { luaL_loadfilex(state, $0, "t") } ?? LUA_ERRFILE
        return (status == LUA_OK, status == LUA_ERRFILE)
    }

    /// Loads a text chunk; pushes the function or the error message.
    func loadString(_ code: String, name: String) -> Bool {
        var code = code
        return code.withUTF8 { b in
            b.withMemoryRebound(to: CChar.self) { c in
                luaL_loadbufferx(state, c.baseAddress, c.count, name, "t") == LUA_OK
            }
        }
    }

    /// Calls the function below `nargs` arguments under pcall with the
    /// traceback handler; true on success.
    func protectedCall(arguments nargs: Int32, results: Int32) -> Bool {
        wobble_pcall_traceback(state, nargs, results) == LUA_OK
    }

    /// The traceback kept by the last failed `protectedCall`, if any.
    func takeTraceback() -> String? {
        wobble_take_traceback(state)
        defer { pop() }
        return messageString(-1)
    }
}

/// The C entry of every host function (see `wobble_dispatch_fn`).
private let dispatchEntry: wobble_dispatch_fn = { state, ctx, index in
    guard let state, let ctx else { return WOBBLE_RAISE }
    let session = Unmanaged<ScriptSession>.fromOpaque(ctx).takeUnretainedValue()
    return session.dispatch(LuaStack(state), index: Int(index))
}

/// The count hook's abort poll (see `wobble_abort_fn`).
private let abortEntry: wobble_abort_fn = { ctx in
    guard let ctx else { return 0 }
    let session = Unmanaged<ScriptSession>.fromOpaque(ctx).takeUnretainedValue()
    return session.shouldAbort() ? 1 : 0
}

/// A Lua state with the shim's allocator, hook and host connection.
final class LuaVM {
    let stack: LuaStack
    private var closed = false

    /// A new state limited to `memoryLimit` bytes of Lua memory, or nil.
    init?(memoryLimit: Int) {
        guard let L = wobble_newstate(memoryLimit) else { return nil }
        stack = LuaStack(L)
    }

    /// Connects host functions and the abort poll to `session` (unretained:
    /// the session must outlive `close()`).
    func connect(_ session: ScriptSession) {
        wobble_set_host(stack.state, Unmanaged.passUnretained(session).toOpaque(), dispatchEntry, abortEntry)
    }

    /// Installs the count hook; the timeout clock starts now.
    func installHook(timeout: Double?) { wobble_install_hook(stack.state, timeout ?? 0) }

    var stopReason: LuaStop {
        switch wobble_stop_reason(stack.state) {
        case WOBBLE_STOP_TIMEOUT: return .timeout
        case WOBBLE_STOP_INTERRUPTED: return .interrupted
        default: return .none
        }
    }

    /// Bytes of Lua memory in use.
    var memoryUsed: Int { wobble_memory_used(stack.state) }

    /// Closes the state (running finalizers, which may call host functions).
    func close() {
        guard !closed else { return }
        closed = true
        wobble_close(stack.state)
    }

    deinit {
        // Normally closed by the session; here the session may be going
        // away, so finalizers must not reach it (handles leak instead).
        if !closed { wobble_set_host(stack.state, nil, nil, nil) }
        close()
    }
}
