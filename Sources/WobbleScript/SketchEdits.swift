import WobbleCore

/// What one sketch is, as far as the studio edits it: its points, its
/// model's parameters and the name of the local it is assigned to.
public struct SketchState: Sendable, Equatable, Hashable, Codable {
    public var points: SketchPoints
    public var parameters: WobbleParameters
    /// The local the sketch is assigned to (`local body = addSketch{...}`), nil: none.
    public var name: String?

    public init(points: SketchPoints, parameters: WobbleParameters = .original, name: String? = nil) {
        self.points = points
        self.parameters = parameters
        self.name = name
    }
}

/// The studio's unsaved edits: the sketches of `addSketch` calls as they
/// should be (by call, 0-based in run order) and the sketches added.
/// A run applies them (`ScriptOptions.sketchEdits`); a save writes them.
public struct SketchEdits: Sendable, Equatable, Codable {
    /// The n-th `addSketch` call of a run makes this sketch instead of its own.
    public var calls: [Int: SketchState] = [:]
    /// Sketches added, put on the control layer before the script's first
    /// `prepare()` or clock step (`wait`, `untilStill`), whichever comes first.
    public var added: [SketchState] = []
    /// `loop()` switched on (true) or off (false) for the scene, nil: as
    /// the scene says. A run applies it; a save writes or removes the
    /// `loop()` line (and turns the scene's `untilStill()` into the wait
    /// it made, since a loop never comes to rest).
    public var loop: Bool?
    /// With `loop` true: the loop's period in seconds, the clip that played
    /// when the loop was switched on (what the animator was watching); the
    /// script is made to end there when it returns before it (`LoopSource.
    /// periodWait`). nil: the period is the clip as the script ends it.
    public var loopPeriod: Double?
    /// The scene's `perform{...}` list as it should be (the studio's `B`
    /// baked a take into it; a baked event deleted or moved on the
    /// timeline), nil: as the scene says. A run schedules it instead of the
    /// scene's own; a save writes it as the scene's `perform{...}` block.
    public var baked: [PerformedEvent]?
    /// Lines of the scene whose `touch`/`impulse`/`shake` statement was
    /// deleted on the timeline: a run skips the calls made from them; a
    /// save takes the statements out.
    public var removedKicks: Set<Int> = []
    /// `addSketch` calls (by call, 0-based in run order, as `calls`) whose
    /// region the studio deleted (`Delete`): the call makes no sketch and
    /// returns nil (the studio deletes only a call whose name nothing else
    /// uses); a save takes its statement out of the scene.
    public var deleted: Set<Int> = []

    public init(calls: [Int: SketchState] = [:], added: [SketchState] = [], loop: Bool? = nil, loopPeriod: Double? = nil,
                baked: [PerformedEvent]? = nil, removedKicks: Set<Int> = [], deleted: Set<Int> = []) {
        self.calls = calls
        self.added = added
        self.loop = loop
        self.loopPeriod = loopPeriod
        self.baked = baked
        self.removedKicks = removedKicks
        self.deleted = deleted
    }

    public var isEmpty: Bool { calls.isEmpty && added.isEmpty && loop == nil && baked == nil && removedKicks.isEmpty && deleted.isEmpty }
}

/// A clock step the script took with `untilStill`: its line and how long
/// it waited (what `wait(seconds)` gives in its place).
public struct StillWait: Sendable, Equatable {
    public var line: Int?
    /// The module's file name when the call was made in one (nil: the scene).
    public var file: String?
    public var start: Double
    public var end: Double
    public init(line: Int?, file: String?, start: Double, end: Double) {
        self.line = line
        self.file = file
        self.start = start
        self.end = end
    }
}
