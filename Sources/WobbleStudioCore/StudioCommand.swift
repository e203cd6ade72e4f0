import WobbleCore

/// What a front end asks of the studio core: every key, click and drag of
/// the window (and of a page) is one of these. Points are image pixels
/// (the front end maps its own coordinates; radii too: the window's 10
/// window pixels of a handle are `10 / scale` image pixels). Keys are not
/// here: the window's key map (`StudioKeyMap`) says which command a key is.
package enum StudioCommand: Codable, Equatable, Sendable {
    // Transport.
    /// Play or pause (`Space`).
    case togglePlay
    /// One frame back or forward, pausing (`Left`/`Right`).
    case step(Int)
    /// Frame 0, pausing (`Home`).
    case home
    /// Pauses (a scrub of the timeline begins).
    case pause
    /// Puts the playhead on a frame, pausing (a scrub of the timeline).
    case seek(frame: Int)
    /// Shows or hides the handles (`H`).
    case toggleHandles

    // Quitting.
    /// `Esc` (`closing` false) or the window's close: quits at once without
    /// unsaved edits, else asks first.
    case quit(closing: Bool)
    /// The answer to the question before quitting.
    case answerQuit(QuitGuard.Answer)
    /// A click while the question is up: back to editing.
    case backToEditing

    // Editing the sketches.
    /// Writes the edits into the scene (`Ctrl+S`).
    case save
    case undo
    case redo
    /// A region added around `at` (`A`).
    case add(at: Point)
    /// Grabs the handle within `radius` of a point: the drag begins.
    case grab(at: Point, radius: Double)
    /// The grabbed handle goes to a point.
    case dragTo(Point)
    case dragEnd

    // Selection and the inspector.
    /// Selects the region at a point (a handle's within `radius`, else the smallest containing it).
    case select(at: Point, radius: Double)
    /// The next (1) or previous (-1) region (`Tab`, `Shift+Tab`).
    case selectNext(Int)
    /// Moves the inspector's focus a row up or down.
    case focusRow(by: Int)
    /// Steps the focused row by a number of steps (`-`/`+`, `PageUp`/`PageDown`).
    case stepParameter(Int)
    /// Sets a number parameter (`strength`, `duration`, ...) of the selected region.
    case setParameter(key: String, value: Double)
    /// Sets the selected region's motion model, by name (one of the scene's models).
    case setMotion(String)
    case setPin(PinSide?)
    /// Renaming the selected region: start, characters typed, a character
    /// deleted, kept, left as it was.
    case startRename
    case type(String)
    case renameBackspace
    /// An arrow while renaming: the caret a character left (-1) or right.
    case renameCaret(by: Int)
    case commitRename
    case cancelRename
    /// The selected region renamed at once (a page's name field): as
    /// `startRename`, the name typed, `commitRename`.
    case rename(String)
    /// A press on the inspector's row `row` (`choice`: the choice under it;
    /// `fraction`: where on the slider), the slider moved, released.
    case inspectorPress(row: Int, choice: String?, fraction: Double)
    case inspectorSlide(Double)
    case inspectorRelease

    // Pokes, shakes and takes.
    /// A poke begins at a point (inside a live region) and is performed on `pokeEnd`.
    case pokeBegin(Point)
    case pokeEnd(Point)
    /// A shake in g (device axes, y up).
    case shake(ax: Double, ay: Double)
    /// A game controller's accelerometer sample in g (gravity is filtered out).
    case accelerometer(x: Double, y: Double)
    /// Starts or stops recording a take (`R`).
    case toggleRecording
    /// Forgets the pokes performed (`Backspace`).
    case forgetPokes

    // The timeline.
    /// A press on the timeline at a tick (nil: none near): selects it.
    case pressTick(Tick?)
    /// The pointer over the timeline at clip time `at` (nil: off it); a
    /// tick within `within` seconds of it is named (`StudioCore.hoveredTick`,
    /// found among the ticks there are now: a tick deleted or moved away
    /// is named no more).
    case hoverTimeline(at: Double?, within: Double)
    /// A baked tick dragged to a clip time; the drag ends.
    case dragTick(to: Double)
    case endTickDrag(at: Double)
    /// `Delete`: the selected tick, else the pokes.
    case deleteSelected
    /// `L`: `loop()` on or off.
    case toggleLoop
    /// `B`: the last take baked into the scene.
    case bake

    // Cutouts.
    /// `C`: the selected region's cutout.
    case cutOut
    /// A stroke (`object`: marks object, else background) of brush
    /// `radius` begins at a point, moves, ends.
    case strokeBegin(at: Point, radius: Double, object: Bool)
    case strokeTo(Point)
    case strokeEnd
    /// `O`: a magnetic outline begins; with three points or more, it closes
    /// (fewer: it is left).
    case outline
    /// A click on the picture while outlining: a point on the object's edge.
    case outlinePoint(Point)

    // Exports.
    /// Exports with a preset by its name (nil: the scene's own output, `E`).
    case export(preset: String?)
    /// Opens the `Shift+E` chooser; moves its row; exports a row (nil: the
    /// row chosen); closes it.
    case openExportChooser
    case chooserMove(Int)
    case chooserChoose(Int?)
    case chooserCancel
    /// The frame shown as a PNG beside the scene (`P`).
    case writeStill
    /// Mutes or unmutes the soundtrack (`M`).
    case toggleMute

    /// A key with no command of its own (what the studio says to it
    /// depends on its state: recording, the first run).
    case unbound
}

extension StudioCommand {
    /// The studio's areas, each performed in a file of its own
    /// (`StudioCore+Transport.swift`, `+Edit`, `+Takes`, `+Cutouts`, `+Export`).
    package enum Area: Sendable { case transport, edit, takes, cutouts, export }

    /// The area that performs this command.
    package var area: Area {
        switch self {
        case .togglePlay, .step, .home, .pause, .seek, .toggleHandles, .toggleMute, .unbound:
            return .transport
        case .quit, .answerQuit, .backToEditing, .save, .undo, .redo, .add, .grab, .dragTo, .dragEnd, .select, .selectNext,
             .focusRow, .stepParameter, .setParameter, .setMotion, .setPin, .startRename, .type, .renameBackspace, .renameCaret,
             .commitRename, .cancelRename, .rename, .inspectorPress, .inspectorSlide, .inspectorRelease:
            return .edit
        case .pokeBegin, .pokeEnd, .shake, .accelerometer, .toggleRecording, .forgetPokes, .pressTick, .hoverTimeline, .dragTick,
             .endTickDrag, .deleteSelected, .toggleLoop, .bake:
            return .takes
        case .cutOut, .outline, .outlinePoint, .strokeBegin, .strokeTo, .strokeEnd:
            return .cutouts
        case .export, .openExportChooser, .chooserMove, .chooserChoose, .chooserCancel, .writeStill:
            return .export
        }
    }
}
