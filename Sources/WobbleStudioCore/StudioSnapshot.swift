import WobbleCore

/// What a front end draws at one moment, as one value (JSON for a page):
/// the frame (its index and state), the handles, the inspector's rows,
/// the timeline's ticks, the status and warnings, the title with its
/// unsaved marker, and the questions and sheets open.
package struct StudioSnapshot: Codable, Equatable {
    /// A sketch's handles: which `addSketch` made it (nil: computed where
    /// no call can be named), its shape, whether a drag may edit it, and
    /// whether it is the one selected.
    package struct Handle: Codable, Equatable {
        package var kind: SketchOrigin.Kind?
        package var shape: RegionShape
        package var editable: Bool
        package var selected: Bool
    }

    package var scene: String
    package var title: String
    package var unsaved: Bool
    /// Counts the session's runs (a new run: a new clip).
    package var generation: Int
    package var frame: Int
    package var frameCount: Int
    package var fps: Double
    package var playhead: Double
    package var clipLength: Double
    /// The timeline's scale (the clip's length, held during a tick's drag).
    package var timelineLength: Double
    package var scriptedDuration: Double
    package var playing: Bool
    package var recording: Bool
    package var handlesShown: Bool
    /// The frame's state as the renderer takes it (nil: no clip).
    package var frameState: FrameState?
    package var handles: [Handle]
    package var inspector: InspectorValues?
    package var ticks: [Tick]
    /// The tick under the pointer (`StudioCore.hoveredTick`): its label,
    /// shown in the message's place while it is there.
    package var hovered: String?
    /// The pokes and shakes performed (not in the scene).
    package var performed: [PerformedEvent]
    package var message: String
    package var messageIsError: Bool
    package var sceneError: String?
    package var warnings: [String]
    package var askingToQuit: Bool
    /// The `Shift+E` chooser's row while it is open.
    package var chooserRow: Int?
    /// The chooser's rows while it is open: a name in 10 columns, then
    /// what it writes (`PresetChooser.label`).
    package var chooserChoices: [String]?
    package var exporting: Bool
    /// The scene's first run is still going (only the picture is shown).
    package var firstRunGoing: Bool
    /// The soundtrack is muted (`M`): a page plays it silently too.
    package var muted: Bool
    /// The magnetic outline's points while one is being clicked (`O`,
    /// image pixels; `[]` just after `O`), nil when none is: a click on the
    /// picture then adds a point instead of poking.
    package var outline: [Point]? = nil
    /// The cutout stroke being painted (`Shift`/`Alt` + drag, image
    /// pixels, its brush radius), nil when none is.
    package var stroke: CutoutStroke? = nil
}
