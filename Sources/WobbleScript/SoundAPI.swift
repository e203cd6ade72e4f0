import WobbleAudio
import WobbleCore
import WobbleSystem

/// A sound the script loaded: the analysis, the file, and the `reset()`
/// generation it belongs to (a handle from before a `reset()` is refused).
final class SoundHandle {
    let sound: Sound
    let path: String
    let shown: String
    let generation: Int

    init(sound: Sound, path: String, shown: String, generation: Int) {
        self.sound = sound
        self.path = path
        self.shown = shown
        self.generation = generation
    }
}

/// Sounds: `sound(path)` and its handles (`duration`, `:onsets([opts])`,
/// `:beats()`, `:tempo()`, `:level(t0, t1)`), `soundtrack(handle [, offset])`.
extension ScriptSession {
    static let soundAPI: [HostFunction] = [
        HostFunction("sound") { s, a in try s.loadSound(a) },
        HostFunction("soundtrack") { s, a in try s.setSoundtrack(a) },
        HostFunction("onsets", .soundMethod) { s, a in try s.soundOnsets(a) },
        HostFunction("beats", .soundMethod) { s, a in
            let h = try s.soundHandle(a, 1)
            s.pushTimes(a.lua, h.sound.beats())
            return 1
        },
        HostFunction("tempo", .soundMethod) { s, a in
            a.lua.push(try s.soundHandle(a, 1).sound.tempo())
            return 1
        },
        HostFunction("level", .soundMethod) { s, a in
            let h = try s.soundHandle(a, 1)
            let t0 = try a.finiteNumber(2), t1 = try a.finiteNumber(3)
            guard t1 >= t0 else { throw SceneError("level", "t1 (\(NumberText.plain(t1))) is before t0 (\(NumberText.plain(t0)))") }
            a.lua.push(h.sound.level(from: t0, to: t1))
            return 1
        },
        HostFunction("__index", .soundMeta, messageName: "sound") { s, a in try s.soundIndex(a) },
        HostFunction("__newindex", .soundMeta, messageName: "sound") { _, a in
            throw SceneError("sound", "sound handles are read-only (field \(describeKey(a.lua, 2)))")
        },
        HostFunction("__tostring", .soundMeta, messageName: "tostring") { _, a in
            if let h = a.lua.handleObject(1, kind: .sound) as? SoundHandle {
                a.lua.push("sound '\(PathBytes.display(h.shown))'")
            } else {
                a.lua.push("sound (released)")
            }
            return 1
        },
        HostFunction("__eq", .soundMeta) { s, a in s.handleEquals(a) },
        HostFunction("__gc", .soundMeta) { _, a in a.lua.releaseHandle(1); return 0 },
    ]

    static let soundMethodNames = soundAPI.filter { $0.role == .soundMethod }.map(\.name)

    /// The longest sound a scene may load: as long as the longest clip
    /// (`--max-frames` at the current rate).
    var longestSound: Double { Double(scene.maxFrames) / scene.fps }

    /// `sound(path)` → a sound handle.
    func loadSound(_ a: LuaArgs) throws -> Int32 {
        let path = try a.path(1)
        let full = try checkedDataPath(path, function: "sound")
        let shown = PathBytes.display(path)
        let sound: Sound
        if let known = sounds[full] {
            sound = known
        } else {
            guard let loader = options.soundLoader else {
                throw SceneError("sound", "cannot decode '\(shown)': no sound decoder in this program")
            }
            let limit = longestSound
            let samples: CheckedArray<Float>
            do {
                samples = try loader(full, limit)
            } catch {
                throw SceneError("sound", "\(error)")
            }
            let s = Sound(samples: samples, sampleRate: 44_100)
            guard !samples.isEmpty else { throw SceneError("sound", "'\(shown)' has no samples (a sound of length 0)") }
            // The analysis's arrays (a tenth of the samples' memory) are
            // made later, by `onsets()`, `beats()` or the studio: their room
            // is made sure of now, while a refusal can still be one line.
            do {
                try CheckedMemory.ensureRoom(Sound.analysisBytes(sampleCount: samples.count))
            } catch let e as MemoryRefused {
                throw SceneError("sound", "'\(shown)': out of memory for its analysis (\(MemoryRefused.shown(e.bytes)) refused): the sound is too long for the memory allowed")
            }
            guard s.duration <= limit + 1e-9 else {
                throw SceneError("sound", "'\(shown)' is longer than the longest clip (\(NumberText.seconds(limit)) s: --max-frames \(scene.maxFrames) at \(NumberText.rate(scene.fps)) fps)")
            }
            sound = s
            sounds[full] = s
            recordInput(.sound, full)
        }
        let handle = SoundHandle(sound: sound, path: full, shown: path, generation: soundGeneration)
        let lua = a.lua
        lua.pushNewHandle(handle, kind: .sound)
        lua.rawGet(LuaStack.registry, RegistryKey.soundMeta)
        lua.setMetatable(-2)
        return 1
    }

    /// The sound of the handle at `i` (a live one: loaded since the last `reset()`).
    func soundHandle(_ a: LuaArgs, _ i: Int32) throws -> SoundHandle {
        guard let h = a.lua.handleObject(i, kind: .sound) as? SoundHandle else { throw a.typeError(i, "sound") }
        guard h.generation == soundGeneration else {
            throw SceneError(a.function, "sound '\(PathBytes.display(h.shown))' was loaded before reset(); load it again with sound()")
        }
        return h
    }

    /// `soundtrack(handle [, offset])`.
    func setSoundtrack(_ a: LuaArgs) throws -> Int32 {
        let h = try soundHandle(a, 1)
        let offset = a.isNil(2) ? 0 : try a.finiteNumber(2)
        soundtrack = Soundtrack(path: h.path, shown: PathBytes.display(h.shown), offset: offset, duration: h.sound.duration)
        return 0
    }

    /// `s:onsets([{method =, threshold =, minGap =}])` → times in seconds.
    func soundOnsets(_ a: LuaArgs) throws -> Int32 {
        let h = try soundHandle(a, 1)
        var options = OnsetOptions()
        let lua = a.lua
        if !a.isNil(2) {
            guard lua.type(2) == .table else { throw a.typeError(2, "table") }
            let r = TableReader(lua: lua, function: "onsets")
            try r.checkKeys(2, valid: ["method", "threshold", "minGap"])
            if let m: OnsetOptions.Method = try r.choice(2, "method") { options.method = m }
            if let t = try r.number(2, "threshold", finite: true) {
                guard t >= 0 else { throw SceneError("onsets", "threshold must be at least 0 (got \(NumberText.plain(t)))") }
                options.threshold = t
            }
            if let g = try r.number(2, "minGap", finite: true) {
                guard g >= 0 else { throw SceneError("onsets", "minGap must be at least 0 seconds (got \(NumberText.plain(g)))") }
                options.minGap = g
            }
        }
        pushTimes(lua, h.sound.onsets(options))
        return 1
    }

    /// Sound handle fields (`duration`) and methods.
    func soundIndex(_ a: LuaArgs) throws -> Int32 {
        let lua = a.lua
        guard let h = lua.handleObject(1, kind: .sound) as? SoundHandle else { throw a.typeError(1, "sound") }
        let key = lua.string(2)
        if key == "duration" {
            lua.push(Sound.milliseconds(h.sound.duration))
            return 1
        }
        if let key {
            lua.rawGet(LuaStack.registry, RegistryKey.soundMethods)
            if lua.rawGet(-1, key) == .function { return 1 }
        }
        throw SceneError("sound", "no field \(describeKey(lua, 2)) (fields: duration; methods: \(ScriptSession.soundMethodNames.joined(separator: ", ")))")
    }

    /// Pushes an array of times.
    func pushTimes(_ lua: LuaStack, _ times: [Double]) {
        lua.newTable(array: Int32(clamping: times.count))
        for (i, t) in times.enumerated() {
            lua.push(t)
            lua.rawSet(-2, i + 1)
        }
    }
}
