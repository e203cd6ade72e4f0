import WobbleAudio
import WobbleCore
import WobbleSystem
import Foundation

/// One host function: its Lua name (also the name in messages), where it
/// is registered, and its Swift body. Registration is data: the tables in
/// `API.swift` list every function.
struct HostFunction: Sendable {
    enum Role: Sendable {
        /// A global of the Lua API.
        case global
        /// A method of sketch handles (`s:contains(x, y)`).
        case sketchMethod
        /// A metamethod of sketch handles (`__index`…).
        case sketchMeta
        /// A metamethod of wobble handles.
        case wobbleMeta
        /// A method of sound handles (`s:beats()`).
        case soundMethod
        /// A metamethod of sound handles.
        case soundMeta
        /// Used by the sandbox's Lua prelude only.
        case sandbox
    }

    let name: String
    let role: Role
    /// The function name in argument errors (defaults to `name`).
    let messageName: String
    let body: @Sendable (ScriptSession, LuaArgs) throws -> Int32
    /// For a global: how many arguments its documented signature
    /// (`LuaAPIDoc`) takes; more (not nil) are an argument error before the
    /// body runs (`loop(5)`), so no function silently ignores one.
    let parameterCount: Int?

    init(_ name: String, _ role: Role = .global, messageName: String? = nil,
         _ body: @escaping @Sendable (ScriptSession, LuaArgs) throws -> Int32) {
        self.name = name
        self.role = role
        self.messageName = messageName ?? name
        self.body = body
        parameterCount = role == .global ? LuaAPIDoc.functions.first(where: { $0.name == name })?.parameters.count : nil
    }
}

/// Registry keys (strings in the Lua registry).
enum RegistryKey {
    static let handles = "wobble.handles"
    static let sketchMeta = "wobble.sketch.meta"
    static let wobbleMeta = "wobble.wobble.meta"
    static let sketchMethods = "wobble.sketch.methods"
    static let soundMeta = "wobble.sound.meta"
    static let soundMethods = "wobble.sound.methods"
}

/// One run of a script: the VM, the scene and the script's folder.
final class ScriptSession {
    /// Most sketches the control layer holds at once (Swift memory is not
    /// under the Lua memory limit, so it is bounded here).
    static let maxSketches = 10_000

    let options: ScriptOptions
    let scene: Scene
    /// The script's folder as given ("" for the current directory).
    let folder: String
    /// `image(path)` resolved, once called (without `--image`).
    var imagePath: String?
    /// `output(path)` resolved.
    var outputPath: String?
    /// Where the paths a script names may lead.
    let policy: PathPolicy
    /// Every file the scene read (the scene, image, traces, modules, code).
    var inputs: [InputFile] = []
    /// Warnings of the run so far (`ScriptResult.warnings`).
    var warnings: [String] = []
    let functions: [HostFunction]
    private var vm: LuaVM?
    /// The `addSketch` calls so far.
    var sketchCalls: [SketchCall] = []
    /// The kicks given so far (at most `maxKicks`: ticks on a timeline).
    var kicks: [ScriptKick] = []
    static let maxKicks = 20_000
    /// The `untilStill` calls so far (the studio's loop turns them into waits).
    var stillWaits: [StillWait] = []
    /// The events the scene file's own `perform{...}` gave.
    var scenePerformed: [PerformedEvent] = []
    /// Whether `prepare()` has run (a touch that finds no region then says
    /// the scene has none, not that `prepare()` is missing).
    var prepared = false

    /// Notes a kick of `kind` at `time` (now when nil), called from the line running.
    func noteKick(_ kind: String, _ lua: LuaStack, at time: Double? = nil) {
        guard kicks.count < ScriptSession.maxKicks else { return }
        let (line, file) = caller(lua)
        kicks.append(ScriptKick(time: time ?? scene.now, kind: kind, line: line, file: file))
    }

    /// Whether the call running was deleted on the studio's timeline (its
    /// line of the scene file is in `SketchEdits.removedKicks`): it does nothing.
    func isRemovedKick(_ lua: LuaStack) -> Bool {
        guard !options.sketchEdits.removedKicks.isEmpty else { return false }
        let (line, file) = caller(lua)
        return file == nil && line.map { options.sketchEdits.removedKicks.contains($0) } ?? false
    }

    /// The line running and, when it is in a module, the module's file name.
    func caller(_ lua: LuaStack) -> (line: Int?, file: String?) {
        let at = lua.callerPosition()
        let file = at.flatMap { $0.source == "@" + options.scriptPath ? nil : ScenePaths.name(String($0.source.dropFirst())) }
        return (at?.line ?? lua.callerLine, file)
    }
    /// `reset()`s so far: a sound handle from before the last one is refused.
    var soundGeneration = 0
    /// Sounds decoded so far, by resolved path (`sound()` of a file again is free).
    var sounds: [String: Sound] = [:]
    /// `soundtrack(handle [, offset])`, once called.
    var soundtrack: Soundtrack?
    /// Whether the studio's added sketches are on the control layer yet.
    var addedPlaced = false

    init(options: ScriptOptions) {
        self.options = options
        scene = Scene(fixedFPS: options.fixedFPS, maxFrames: options.maxFrames, historyLimit: options.memoryLimit)
        if let o = options.imageOverride { scene.imageSize = o }
        scene.perform(options.performed)
        folder = ScriptSession.folder(of: options.scriptPath)
        policy = PathPolicy(folder: folder, allowIO: options.allowIO)
        functions = ScriptSession.api
    }

    /// The folder part of `path` ("" when it has none, "/" for the root).
    static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// `path` (as given in the script) resolved against the script's folder.
    func resolve(_ path: String) -> String {
        let full = policy.resolve(path)
        options.onPath(full)
        return full
    }

    func shouldAbort() -> Bool { options.shouldAbort() }

    /// `message` (Lua's text, which names the scene by its bytes, as
    /// `scene.lua:12:`) with a scene name that holds control characters
    /// (a newline) naming it as every other message does (`\x0A`): the
    /// first line stays the first line.
    func namingScene(_ message: String) -> String {
        let raw = PathBytes.text(PathBytes.bytes(options.scriptPath))
        guard raw != options.scriptPath, !raw.isEmpty else { return message }
        return message.replacingOccurrences(of: raw, with: options.scriptPath)
    }

    // MARK: Running

    func run() throws -> ScriptResult {
        guard let vm = LuaVM(memoryLimit: options.memoryLimit) else {
            throw ScriptError(message: "wobble-run: cannot create a Lua state", kind: .load)
        }
        self.vm = vm
        vm.connect(self)
        defer {
            vm.close()
            self.vm = nil
        }
        let lua = vm.stack
        vm.installHook(timeout: options.timeout)
        if let problem = setUp(lua) {
            throw ScriptError(message: "wobble-run: cannot set up Lua: \(problem)", kind: .load)
        }

        if options.sketchEdits.loop == true {
            // The studio's `L`: a loop from the start; `untilStill()` waits
            // as it would without it (the loop's period is the clip as it was).
            try? scene.setLoop()
            scene.untilStillInLoop = true
        }
        if let baked = options.sketchEdits.baked {
            // The studio's bake, in place of the scene's own `perform{...}`
            // (which sits before the first clock step: time 0).
            do { try scene.schedule(baked) } catch let e as SceneError {
                throw ScriptError(message: "wobble-run: \(e.description)", kind: .finish)
            }
        }
        recordInput(.scene, options.scriptPath)
        let loaded = lua.loadFile(options.scriptPath)
        if !loaded.ok {
            // Lua's messages name files by their bytes (`@path`): kept as
            // `PathBytes` strings, which messages show as `\xFE`.
            var msg = namingScene(lua.messageString(-1) ?? "cannot load \(options.scriptPath)")
            // Lua's refusal of a compiled chunk names no file.
            if msg.hasPrefix("attempt to load a binary chunk") {
                msg = "wobble-run: scene '\(PathBytes.display(options.scriptPath, controls: true))' is a compiled Lua chunk (its first byte is ESC, as luac writes them); wobble-run runs Lua source text only"
            }
            throw ScriptError(message: loaded.fileError ? "wobble-run: \(msg)" : msg, kind: .load)
        }
        options.onLoaded()
        // The arguments' exact bytes (`PathBytes`), as the script's `...`.
        for a in options.arguments { lua.pushPath(a) }
        let ok = lua.protectedCall(arguments: Int32(options.arguments.count), results: 0)
        var stop = vm.stopReason
        // An API call that waited on something outside (sound()'s ffmpeg, a
        // read) and gave up because a stop was asked fails as an error of
        // the script's: it is the stop, said as one (no traceback, 130/143).
        if !ok, stop == .none, shouldAbort() { stop = .interrupted }
        if !ok || stop != .none {
            // (ok with a stop: the hook fired but the script still returned.)
            let stopped = stop == .timeout
                ? "wobble-run: script timed out after \(options.timeout ?? 0) s (--timeout)" : "wobble-run: interrupted"
            var message = ok ? stopped : namingScene(lua.messageString(-1) ?? "(error object is not a string)")
            if !ok && stop != .none { message = Self.oneLocation(message) }
            if !ok && message == "not enough memory" {
                // Lua's memory error carries no position: name the script and the limit.
                message = "\(options.scriptPath): not enough memory (a script gets at most \(options.memoryLimit >> 20) MiB of Lua memory)"
            }
            let traceback = ok ? nil : lua.takeTraceback().map(namingScene)
            let kind: ScriptError.Kind = stop == .timeout ? .timeout : stop == .interrupted ? .interrupted : .runtime
            throw ScriptError(message: message, details: traceback, kind: kind)
        }
        lua.setTop(0)

        let clip: Clip
        var periodWait: LoopSource.PeriodWait?
        do {
            if options.sketchEdits.loop == true, let period = options.sketchEdits.loopPeriod {
                // The studio's `L`: the loop is the clip that played when it
                // was switched on; a save writes this wait.
                periodWait = LoopSource.periodWait(period: period, scriptEnd: scene.now, waits: stillWaits)
                if let w = periodWait { try scene.wait(until: w.end) }
            }
            placeAddedSketches()
            clip = try scene.finish()
        } catch let e as SceneError {
            let msg = e.function == "wobble-run" ? e.message : e.description
            throw ScriptError(message: "wobble-run: \(msg)", kind: .finish)
        }
        var result = ScriptResult(clip: clip, outputPath: outputPath, imagePath: imagePath, inputs: inputs)
        result.scriptEnd = scene.scriptEnd
        result.sketchCalls = sketchCalls
        result.kicks = kicks
        result.stillWaits = stillWaits
        result.periodWait = periodWait
        result.scenePerformed = scenePerformed
        result.warnings = warnings
        result.soundtrack = soundtrack
        result.soundtrackSound = soundtrack.flatMap { sounds[$0.path] }
        return result
    }

    /// A stop's message (`--timeout`, an interrupt) with one position: the
    /// hook names where the script was running, and every
    /// `coroutine.wrap` the error passes through puts its caller's position
    /// in front again (`c.lua:2: c.lua:2: script timed out after 5.0 s`).
    /// Keeps the innermost position, where the script was stopped.
    static func oneLocation(_ message: String) -> String {
        let stopTexts = ["script timed out after ", "interrupted"]
        guard let text = stopTexts.compactMap({ message.range(of: $0, options: .backwards) }).first else { return message }
        let prefix = message[..<text.lowerBound]
        // Positions are `chunk:line: `; the last one starts after the
        // one before it ends.
        var starts: [String.Index] = [prefix.startIndex]
        var i = prefix.startIndex
        while i < prefix.endIndex {
            guard prefix[i] == ":" else { i = prefix.index(after: i); continue }
            var j = prefix.index(after: i)
            var digits = 0
            while j < prefix.endIndex, prefix[j].isASCII, prefix[j].isNumber { j = prefix.index(after: j); digits += 1 }
            if digits > 0, prefix[j...].hasPrefix(": ") {
                let end = prefix.index(j, offsetBy: 2)
                if end < prefix.endIndex { starts.append(end) }
                i = end
            } else {
                i = prefix.index(after: i)
            }
        }
        return String(prefix[starts.last!...]) + message[text.lowerBound...]
    }

    /// Calls host function `index` (from the trampoline): its result count,
    /// or `WOBBLE_RAISE` (-1) with the message pushed.
    func dispatch(_ lua: LuaStack, index: Int) -> Int32 {
        guard functions.indices.contains(index) else {
            lua.push("wobble-run: no such host function")
            return -1
        }
        let f = functions[index]
        let args = LuaArgs(lua: lua, function: f.messageName, selfOffset: f.role == .sketchMethod || f.role == .soundMethod ? 1 : 0)
        // The message names files as every message does (`\xFE`, `\x0A`):
        // as text in Lua, it stays one line and keeps its escapes.
        do {
            if let n = f.parameterCount, args.count > Int32(n) {
                // The first argument too many that is not nil.
                if let extra = (Int32(n + 1)...args.count).first(where: { !args.isNil($0) }) {
                    throw args.typeError(extra, "no value")
                }
            }
            return try f.body(self, args)
        } catch let e as ArgumentError {
            lua.push(PathBytes.display(e.message))
        } catch let e as SceneError {
            lua.push(PathBytes.display(e.description))
        } catch {
            lua.push(PathBytes.display("\(f.messageName): \(error)"))
        }
        return -1
    }

    // MARK: Handles

    /// Pushes the handle of `object` (a `Sketch` or `WobbleModel`): the same
    /// userdata for the same object while the script holds it.
    func pushHandle(_ lua: LuaStack, _ object: AnyObject, id: Int, kind: HandleKind) {
        lua.rawGet(LuaStack.registry, RegistryKey.handles)
        if lua.rawGet(-1, id) == .userdata, lua.handleObject(-1, kind: kind) === object {
            lua.remove(-2)
            return
        }
        lua.pop()
        lua.pushNewHandle(object, kind: kind)
        lua.rawGet(LuaStack.registry, kind == .sketch ? RegistryKey.sketchMeta : kind == .wobble ? RegistryKey.wobbleMeta : RegistryKey.soundMeta)
        lua.setMetatable(-2)
        lua.pushValue(-1)
        lua.rawSet(-3, id)
        lua.remove(-2)
    }

    func pushSketch(_ lua: LuaStack, _ s: Sketch) { pushHandle(lua, s, id: s.id, kind: .sketch) }
    func pushWobble(_ lua: LuaStack, _ m: WobbleModel) { pushHandle(lua, m, id: m.id, kind: .wobble) }

    // MARK: Files

    /// A file's bytes, or a message with the system's reason.
    static func readFile(_ path: String, limit: Int = 256 << 20) -> Result<[UInt8], ArgumentError> {
        do {
            return .success(try Posix.readFile(path, limit: limit))
        } catch let e as PosixError {
            return .failure(ArgumentError(Posix.reason(e.code)))
        } catch {
            return .failure(ArgumentError("larger than \(limit >> 20) MiB"))
        }
    }
}
