import WobbleCore
import WobbleSystem

/// The Lua environment of a script (sandbox by construction). Sandboxed
/// by construction: only the safe libraries are opened, `os` and `debug`
/// are rebuilt from a few functions, `load` takes text chunks only, and
/// `loadfile`, `dofile` and `require` reach files inside the script's
/// folder only. `setmetatable` refuses `__gc` (finalizers run with hooks
/// off, out of --timeout's reach). `--allow-io` opens the full standard
/// libraries instead. In both modes `print` writes to stdout (stderr when
/// `ScriptOptions.printToStdout` is false: the output is stdout) and `xpcall`'s
/// handler is skipped once the script is stopped.
extension ScriptSession {
    /// Libraries opened in the sandbox, as globals of the same name.
    static let sandboxLibraries: [(String, LuaLibrary)] = [
        ("string", .string), ("table", .table), ("math", .math), ("utf8", .utf8), ("coroutine", .coroutine),
    ]
    /// The `os` functions the sandbox keeps.
    static let sandboxOS = ["time", "clock", "date", "difftime"]

    /// Lua half of the sandbox: `loadfile`, `dofile`, `require`, `package`.
    /// `resolve(kind, path)` (a host function) returns the path to open, or
    /// nil, a message, and whether the caller must raise it. `redact(msg,
    /// path)` takes the quoted text out of a load error (`ScriptSession.
    /// redactSyntaxError`): a file's content never appears in a message.
    static let prelude = """
    local resolve, rawloadfile, loaded, redact = ...
    local error, select, type = error, select, type
    local function loadfile(path, mode, ...)
      local p, err, raise = resolve("loadfile", path)
      if not p then
        if raise then error(err, 2) end
        return nil, err
      end
      local f, msg
      if select("#", ...) > 0 then f, msg = rawloadfile(p, "t", ...) else f, msg = rawloadfile(p, "t") end
      if not f then return nil, redact(msg, p) end
      return f
    end
    local function dofile(path)
      local p, err = resolve("dofile", path)
      if not p then error(err, 2) end
      local f, msg = rawloadfile(p, "t")
      if not f then error(redact(msg, p), 0) end
      return f()
    end
    local function require(name)
      if type(name) == "string" then
        local v = loaded[name]
        if v ~= nil then return v end
      end
      local p, err = resolve("require", name)
      if not p then error(err, 2) end
      local f, msg = rawloadfile(p, "t")
      if not f then
        error("error loading module '" .. name .. "' from file '" .. p .. "':\\n\\t" .. redact(msg, p), 2)
      end
      local r = f(name, p)
      if r ~= nil then loaded[name] = r elseif loaded[name] == nil then loaded[name] = true end
      return loaded[name], p
    end
    _G.loadfile, _G.dofile, _G.require = loadfile, dofile, require
    _G.package = { loaded = loaded }
    """

    /// With `--allow-io`: Lua's own `require`, `dofile` and `loadfile`,
    /// wrapped to record the files they read (`record(role, path)`).
    static let allowIOPrelude = """
    local record = ...
    local require, dofile, loadfile, pack, unpack, type = require, dofile, loadfile, table.pack, table.unpack, type
    _G.require = function(name, ...)
      local r = pack(require(name, ...))
      if type(r[2]) == "string" then record("module", r[2]) end
      return unpack(r, 1, r.n)
    end
    _G.dofile = function(path, ...)
      if type(path) == "string" then record("code", path) end
      return dofile(path, ...)
    end
    _G.loadfile = function(path, ...)
      if type(path) == "string" then record("code", path) end
      return loadfile(path, ...)
    end
    """

    /// Opens the libraries and binds the API; returns a problem or nil.
    func setUp(_ lua: LuaStack) -> String? {
        lua.pushGlobalTable()
        let g = lua.absIndex(-1)
        defer { lua.setTop(0) }

        if options.allowIO {
            lua.openAllLibraries()
            // Modules next to the script come first.
            if lua.rawGet(g, "package") == .table {
                let p = lua.absIndex(-1)
                let dir = folder.isEmpty ? "." : folder
                let old = lua.rawGet(p, "path") == .string ? (lua.string(-1) ?? "") : ""
                lua.pop()
                lua.push("\(dir)/?.lua;\(dir)/?/init.lua;" + old)
                lua.rawSet(p, "path")
            }
            lua.pop()
            // Record what require/dofile/loadfile read: no output may replace it.
            guard lua.loadString(ScriptSession.allowIOPrelude, name: "=[allow-io]") else { return lua.string(-1) ?? "prelude" }
            lua.pushHostFunction(index(of: "record", role: .sandbox))
            guard lua.protectedCall(arguments: 1, results: 0) else { return lua.string(-1) ?? "prelude" }
        } else {
            if let problem = openSandbox(lua, globals: g) { return problem }
        }
        lua.pushPrint(toStdout: options.printToStdout)
        lua.rawSet(g, "print")
        lua.rawGet(g, "xpcall")
        lua.pushStoppableXpcall()
        lua.rawSet(g, "xpcall")

        // math.randomseed(seed): reproducible runs.
        if lua.rawGet(g, "math") == .table, lua.rawGet(-1, "randomseed") == .function {
            lua.push(options.seed)
            if !lua.protectedCall(arguments: 1, results: 0) { return "math.randomseed: \(lua.string(-1) ?? "?")" }
        }
        lua.setTop(g)
        // math.randomseed() without arguments would reseed from the clock:
        // it reseeds from --seed instead, so output stays reproducible.
        let reseed = """
            local seed, randomseed, select = ...
            if type(math) == "table" and randomseed then
              math.randomseed = function(...)
                if select("#", ...) == 0 then return randomseed(seed) end
                return randomseed(...)
              end
            end
            """
        guard lua.loadString(reseed, name: "=randomseed") else { return "math.randomseed: \(lua.string(-1) ?? "?")" }
        lua.push(options.seed)
        if lua.rawGet(g, "math") == .table { _ = lua.rawGet(-1, "randomseed"); lua.remove(-2) } else { lua.pop(); lua.pushNil() }
        lua.rawGet(g, "select")
        if !lua.protectedCall(arguments: 3, results: 0) { return "math.randomseed: \(lua.string(-1) ?? "?")" }
        lua.setTop(g)

        registerAPI(lua, globals: g)

        // arg: the strings after `--`, arg[0] the script.
        lua.newTable(array: Int32(options.arguments.count), record: 1)
        lua.push(options.scriptPath)
        lua.rawSet(-2, 0)
        for (i, a) in options.arguments.enumerated() {
            lua.push(a)
            lua.rawSet(-2, i + 1)
        }
        lua.rawSet(g, "arg")
        return nil
    }

    private func openSandbox(_ lua: LuaStack, globals g: Int32) -> String? {
        // Base library: all of it is safe except file access and binary chunks.
        guard lua.openLibrary(.base) else { return lua.string(-1) ?? "base" }
        lua.pop()
        lua.rawGet(g, "load")
        lua.pushTextLoad()
        lua.rawSet(g, "load")
        lua.rawGet(g, "setmetatable")
        lua.pushSandboxSetmetatable()
        lua.rawSet(g, "setmetatable")
        lua.rawGet(g, "loadfile")            // the original, for the prelude
        let rawLoadfile = lua.absIndex(-1)
        lua.pushNil()
        lua.rawSet(g, "loadfile")
        lua.pushNil()
        lua.rawSet(g, "dofile")

        // `package.loaded` of the sandbox's `require`.
        lua.newTable()
        let loaded = lua.absIndex(-1)
        lua.pushValue(g)
        lua.rawSet(loaded, "_G")

        for (name, lib) in ScriptSession.sandboxLibraries {
            guard lua.openLibrary(lib) else { return lua.string(-1) ?? name }
            lua.pushValue(-1)
            lua.rawSet(loaded, name)
            lua.rawSet(g, name)
        }
        // os: time, clock, date, difftime only.
        guard lua.openLibrary(.os) else { return lua.string(-1) ?? "os" }
        lua.newTable()
        for name in ScriptSession.sandboxOS {
            lua.rawGet(-2, name)
            lua.rawSet(-2, name)
        }
        lua.remove(-2)
        lua.pushValue(-1)
        lua.rawSet(loaded, "os")
        lua.rawSet(g, "os")
        // debug: traceback only (no sethook: the timeout hook stays).
        guard lua.openLibrary(.debug) else { return lua.string(-1) ?? "debug" }
        lua.newTable()
        lua.rawGet(-2, "traceback")
        lua.rawSet(-2, "traceback")
        lua.remove(-2)
        lua.pushValue(-1)
        lua.rawSet(loaded, "debug")
        lua.rawSet(g, "debug")

        // The prelude: loadfile, dofile, require, package.
        guard lua.loadString(ScriptSession.prelude, name: "=[sandbox]") else { return lua.string(-1) ?? "prelude" }
        lua.pushHostFunction(index(of: "resolve", role: .sandbox))
        lua.pushValue(rawLoadfile)
        lua.pushValue(loaded)
        lua.pushHostFunction(index(of: "redact", role: .sandbox))
        guard lua.protectedCall(arguments: 4, results: 0) else { return lua.string(-1) ?? "prelude" }
        lua.setTop(g)
        return nil
    }

    /// The index of a host function in `functions`.
    func index(of name: String, role: HostFunction.Role) -> Int {
        functions.firstIndex { $0.name == name && $0.role == role }!
    }

    /// Globals, handle metatables and the handle cache.
    private func registerAPI(_ lua: LuaStack, globals g: Int32) {
        for (i, f) in functions.enumerated() where f.role == .global {
            lua.pushHostFunction(i)
            lua.rawSet(g, f.name)
        }
        // Handle cache: id -> userdata, weak values.
        lua.newTable()
        lua.newTable()
        lua.push("v")
        lua.rawSet(-2, "__mode")
        lua.setMetatable(-2)
        lua.rawSet(LuaStack.registry, RegistryKey.handles)

        lua.newTable()
        for (i, f) in functions.enumerated() where f.role == .sketchMethod {
            lua.pushHostFunction(i)
            lua.rawSet(-2, f.name)
        }
        lua.rawSet(LuaStack.registry, RegistryKey.sketchMethods)

        lua.newTable()
        for (i, f) in functions.enumerated() where f.role == .soundMethod {
            lua.pushHostFunction(i)
            lua.rawSet(-2, f.name)
        }
        lua.rawSet(LuaStack.registry, RegistryKey.soundMethods)

        for (role, key, name) in [(HostFunction.Role.sketchMeta, RegistryKey.sketchMeta, "sketch"),
                                  (.wobbleMeta, RegistryKey.wobbleMeta, "wobble"),
                                  (.soundMeta, RegistryKey.soundMeta, "sound")] {
            lua.newTable()
            for (i, f) in functions.enumerated() where f.role == role {
                lua.pushHostFunction(i)
                lua.rawSet(-2, f.name)
            }
            lua.push(name)
            lua.rawSet(-2, "__name")
            lua.push(name)
            lua.rawSet(-2, "__metatable")
            lua.rawSet(LuaStack.registry, key)
        }
    }

    // MARK: Paths for loadfile, dofile, require

    /// `resolve(kind, path)` of the prelude: pushes the path to open, or
    /// nil, a message and whether to raise it.
    func sandboxResolve(_ a: LuaArgs) throws -> Int32 {
        let lua = a.lua
        let kind = lua.string(1) ?? "loadfile"
        func deny(_ message: String, raise: Bool) -> Int32 {
            lua.pushNil()
            lua.push(message)
            lua.push(raise)
            return 3
        }
        if kind == "require" {
            guard let name = lua.pathString(2) else {
                return deny("bad argument #1 to 'require' (string expected, got \(describe(lua, 2)))", raise: true)
            }
            let parts = name.split(separator: ".", omittingEmptySubsequences: false)
                .flatMap { $0.split(separator: "/", omittingEmptySubsequences: false) }
            guard !name.isEmpty, !name.utf8.contains(0), parts.allSatisfy({ !$0.isEmpty }) else {
                return deny("require: module name '\(PathBytes.display(name))' must name a file inside the scene's folder (like 'lib.util')",
                            raise: true)
            }
            let rel = parts.joined(separator: "/")
            var tried: [String] = []
            for candidate in [rel + ".lua", rel + "/init.lua"] {
                tried.append(resolve(candidate))
                if case .success(let full) = policy.code(candidate) {
                    recordInput(.module, full)
                    lua.pushPath(full)
                    return 1
                }
            }
            return deny("module '\(PathBytes.display(name))' not found in the scene's folder (no file '\(tried.map { PathBytes.display($0) }.joined(separator: "', no file '"))')",
                        raise: true)
        }
        let raise = kind == "dofile"
        guard lua.type(2) == .string, let path = lua.pathString(2) else {
            if lua.type(2).rawValue <= LuaType.nil.rawValue {
                return deny("\(kind): reading standard input is not available (sandbox; --allow-io lifts it)", raise: raise)
            }
            return deny("bad argument #1 to '\(kind)' (string expected, got \(describe(lua, 2)))", raise: true)
        }
        guard !path.utf8.contains(0) else {
            return deny("bad argument #1 to '\(kind)' (path contains a NUL byte)", raise: true)
        }
        switch policy.code(path) {
        case .success(let full):
            recordInput(.code, full)
            lua.pushPath(full)
            return 1
        case .failure(let r):
            if r.message.hasPrefix("cannot be opened: ") {
                return deny("cannot open \(PathBytes.display(resolve(path))): \(r.message.dropFirst("cannot be opened: ".count))", raise: raise)
            }
            return deny("\(kind): '\(PathBytes.display(path))' \(r.message) (sandbox; --allow-io lifts it)", raise: raise)
        }
    }
}
