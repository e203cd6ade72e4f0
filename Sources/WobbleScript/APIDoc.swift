import WobbleCore

/// The Lua API described for editors: every global function with its
/// parameters and a one-line doc, from which `wobble-run --generate`
/// writes a Lua language-server definition file (`---@meta`) and a
/// `luacheck` standard. A test holds `functions` to the registered API
/// (`registeredGlobals`), so the two cannot drift.
public enum LuaAPIDoc {
    /// One parameter: its name, its LuaLS type, and whether it may be left out.
    public struct Parameter: Sendable {
        public let name: String
        public let type: String
        public let optional: Bool
        init(_ name: String, _ type: String, optional: Bool = false) {
            self.name = name
            self.type = type
            self.optional = optional
        }
    }

    /// One global function.
    public struct Function: Sendable {
        public let name: String
        public let parameters: [Parameter]
        /// LuaLS return types, in order (empty: none).
        public let returns: [String]
        public let doc: String
        init(_ name: String, _ parameters: [Parameter], returns: [String] = [], _ doc: String) {
            self.name = name
            self.parameters = parameters
            self.returns = returns
            self.doc = doc
        }
    }

    static let point = "wobble.PointSpec"
    static let target = "wobble.Wobble|integer|nil"

    /// Every global function of the API, in the order of docs/API.md.
    public static let functions: [Function] = [
        Function("image", [Parameter("path", "string")], returns: ["integer", "integer"],
                 "Loads the scene's PNG or JPEG image (relative to the scene's folder); returns its width and height."),
        Function("size", [], returns: ["integer", "integer"], "The image's width and height in pixels."),
        Function("fps", [Parameter("n", "number", optional: true)], returns: ["number"],
                 "Sets the frame rate (before the first frame) and returns it; --fps overrides it."),
        Function("output", [Parameter("path", "string")],
                 "The default output (x.gif, a folder/ or a pattern for PNG frames, a video), inside the scene's folder; -o overrides it."),
        Function("addSketch", [Parameter("spec", "wobble.SketchSpec", optional: true)], returns: ["wobble.Sketch"],
                 "Adds a sketch (four corners and a center) to the control layer."),
        Function("sketchModels", [], returns: ["wobble.Sketch[]"], "The control layer's sketches, in order."),
        Function("clear", [], "Removes every sketch of the control layer."),
        Function("prepare", [], returns: ["wobble.Wobble[]"],
                 "Every sketch becomes a live wobble model; the control layer is cleared."),
        Function("wobbleModels", [], returns: ["wobble.ModelState[]"],
                 "The live models' state now: points, direction, amplitude, lastAnimationBeginTime."),
        Function("impulse", [Parameter("target", target), Parameter("dx", "number"), Parameter("dy", "number"),
                             Parameter("amplitude", "number", optional: true)],
                 "Starts a wobble now on one model (handle or 1-based index) or on every live model (nil)."),
        Function("touch", [Parameter("x0", "number"), Parameter("y0", "number"), Parameter("x1", "number"), Parameter("y1", "number")],
                 returns: ["wobble.Wobble?"],
                 "A drag from (x0, y0) to (x1, y1): the innermost live model containing the start point (smallest corner area, first on a tie) wobbles along it."),
        Function("perform", [Parameter("events", "table")],
                 "Pokes and shakes at clip times: {{t, touch = {x0, y0, x1, y1}}, {t, shake = {ax, ay}}, ...} (what the studio's B bakes from a take); call it before the clock passes them."),
        Function("enableMotion", [Parameter("trace", "string", optional: true)],
                 "Switches the accelerometer on; a CSV trace (t, ax, ay) plays on the virtual clock."),
        Function("shake", [Parameter("ax", "number"), Parameter("ay", "number")],
                 "One accelerometer sample now (g, device axes, y up); needs enableMotion()."),
        Function("reset", [], "Drops the live models and sketches, switches motion off."),
        Function("overlap", [Parameter("mode", "\"sum\"|\"first\"")],
                 "How overlapping regions combine, for the whole clip (before the first frame)."),
        Function("edges", [Parameter("mode", "\"mirror\"|\"clamp\"")],
                 "What samples outside the image read, for the whole clip (before the first frame)."),
        Function("loop", [],
                 "The clip becomes one period of an endless loop: it keeps moving and its last frame flows into the first (before the first frame)."),
        Function("overlay", [Parameter("on", "boolean")], "Draws the control layer over the following frames."),
        Function("wait", [Parameter("seconds", "number")], "Advances the virtual clock, recording frames."),
        Function("time", [], returns: ["number"], "The virtual time in seconds."),
        Function("untilStill", [Parameter("maxSeconds", "number", optional: true)], returns: ["boolean"],
                 "Waits until every live model rests (true), or maxSeconds ran out first (false)."),
        Function("sound", [Parameter("path", "string")], returns: ["wobble.Sound"],
                 "Loads a sound (WAV, FLAC, MP3, Ogg, Opus, AAC/M4A; decoded by ffmpeg; relative to the scene's folder): its duration, onsets, beats, tempo and level."),
        Function("soundtrack", [Parameter("sound", "wobble.Sound"), Parameter("offset", "number", optional: true)],
                 "Muxes the sound into video outputs (MP4, WebM, MOV, MKV), its time 0 at clip time offset (default 0), trimmed to the clip."),
    ]

    /// Read-only globals that are not functions.
    public static let readGlobals = ["arg"]

    /// The names of the global functions the host registers.
    public static var registeredGlobals: [String] {
        ScriptSession.api.filter { $0.role == .global }.map(\.name)
    }

    /// The methods of sketch handles the host registers.
    public static var registeredSketchMethods: [String] {
        ScriptSession.api.filter { $0.role == .sketchMethod }.map(\.name)
    }

    /// A Lua language-server definition file (`---@meta`): editors
    /// complete and check scenes with it.
    public static func luaLSMeta(version: String) -> String {
        // The models and their number parameters, as the models declare them.
        let motions = MotionCatalog.standard.models.map { "\"\($0.name)\"" }.joined(separator: "|")
        func numbers(_ optional: String) -> String {
            MotionCatalog.standard.parameters.map { "---@field \($0.key)\(optional) number" }.joined(separator: "\n")
        }
        var s = """
        ---@meta wobble-run
        -- The wobble-run scene API (\(version)), for the Lua language server.
        -- Generated by `wobble-run --generate lua-meta`: do not edit.

        ---@alias wobble.PointSpec {x: number, y: number}|number[]

        ---@class wobble.Point
        ---@field x number
        ---@field y number

        ---@class wobble.SketchSpec
        ---@field lt? wobble.PointSpec
        ---@field rt? wobble.PointSpec
        ---@field rb? wobble.PointSpec
        ---@field lb? wobble.PointSpec
        ---@field x? number
        ---@field y? number
        ---@field w? number
        ---@field h? number
        ---@field center? wobble.PointSpec
        ---@field motion? \(motions)
        \(numbers("?"))
        ---@field pin? "bottom"|"top"|"left"|"right"
        ---@field cutout? "auto"|string

        ---@class wobble.Sketch
        ---@field lt wobble.Point
        ---@field rt wobble.Point
        ---@field rb wobble.Point
        ---@field lb wobble.Point
        ---@field center wobble.Point
        ---@field motion \(motions)
        \(numbers(""))
        ---@field pin? "bottom"|"top"|"left"|"right"
        local Sketch = {}

        """
        for m in registeredSketchMethods {
            if m == "contains" {
                s += "--- True when (x, y) is inside the sketch's Bezier boundary.\n---@param x number\n---@param y number\n---@return boolean\nfunction Sketch:contains(x, y) end\n\n"
            } else {
                s += "--- The midpoint of an edge.\n---@return wobble.Point\nfunction Sketch:\(m)() end\n\n"
            }
        }
        s += """
        ---@class wobble.Wobble
        ---@field lt wobble.Point
        ---@field rt wobble.Point
        ---@field rb wobble.Point
        ---@field lb wobble.Point
        ---@field center wobble.Point
        ---@field direction wobble.Point
        ---@field amplitude number
        ---@field lastAnimationBeginTime number

        ---@class wobble.ModelState: wobble.Wobble

        ---@class wobble.OnsetOptions
        ---@field method? "flux"|"energy"|"hfc"
        ---@field threshold? number
        ---@field minGap? number

        ---@class wobble.Sound
        ---@field duration number
        local Sound = {}

        --- Onset times in seconds (spectral flux by default).
        ---@param opts? wobble.OnsetOptions
        ---@return number[]
        function Sound:onsets(opts) end

        --- Beat times in seconds; the tracker follows tempo changes.
        ---@return number[]
        function Sound:beats() end

        --- Beats per minute (the median beat period).
        ---@return number
        function Sound:tempo() end

        --- RMS level of [t0, t1) seconds, in [0, 1].
        ---@param t0 number
        ---@param t1 number
        ---@return number
        function Sound:level(t0, t1) end

        --- The strings after `--` on the command line (arg[0]: the scene).
        ---@type string[]
        arg = {}


        """
        for f in functions {
            s += "--- \(f.doc)\n"
            for p in f.parameters { s += "---@param \(p.name)\(p.optional ? "?" : "") \(p.type)\n" }
            for r in f.returns { s += "---@return \(r)\n" }
            s += "function \(f.name)(\(f.parameters.map(\.name).joined(separator: ", "))) end\n\n"
        }
        return s
    }

    /// A `luacheck` standard: `luacheck --config FILE` (or copied to
    /// `.luacheckrc`) checks scenes against the API; a misspelt function is
    /// an undefined global.
    public static func luacheckrc(version: String) -> String {
        let names = functions.map { "\"\($0.name)\"" }.joined(separator: ", ")
        return """
        -- luacheck standard for wobble-run scenes (\(version)).
        -- Generated by `wobble-run --generate luacheckrc`: do not edit.
        -- Use: luacheck --config PREFIX/share/wobble-run/lua/luacheckrc scene.lua
        -- (PREFIX: where wobble-run is installed, e.g. /usr or /usr/local)
        -- (or: luacheck --std lua54+wobble with this file's stds entry).
        stds.wobble = {
          read_globals = { \(names), "arg" },
        }
        std = "lua54+wobble"
        max_line_length = false
        -- Scenes name sketches they never use again, for readability
        -- (211: unused local variable, 213: unused loop variable).
        ignore = { "211", "213" }

        """
    }
}
