import Foundation
import XCTest
import WobbleCore
import WobbleEngine
import WobbleMedia
import WobbleRender
import WobbleScript
@testable import WobbleStudio
@testable import WobbleStudioCore
import WobbleSystem

private func key(_ k: StudioKey, shift: Bool = false, ctrl: Bool = false) -> StudioInput {
    .key(k, shift: shift, ctrl: ctrl)
}

/// The studio as an editor, in-process: the inspector (select, change
/// parameters by keys and mouse, rename), `A` with a named local, asking
/// before quitting with unsaved edits, saves merged with another program's,
/// undo and redo across saves. Pictures are checked against headless
/// renders, saves against the bytes on disk.
final class StudioInspectorTests: InProcessStudioCase {
    static let body = """
    image("img.png")
    local body = addSketch{x = 40, y = 30, w = 120, h = 90}
    prepare()
    impulse(body, 1, 0.5)
    wait(1)

    """

    /// Where the inspector's column is, and its rows for a sketch of `motion`.
    func panel(_ w: Int, _ h: Int, motion: MotionKind = .classic) -> (x: Int, y: Int, p: InspectorPanel) {
        let l = Layout(imageWidth: w, imageHeight: h, screen: (1920, 1080))
        let p = InspectorPanel(width: l.panelRect.w, height: l.panelRect.h,
                               parameters: WobbleParameters(motion: motion), name: nil,
                               origin: "", readOnly: nil, focused: 0, typing: nil)
        return (l.panelRect.x, l.panelRect.y, p)
    }

    /// The lines `--check` of `scene` plus `probe` prints.
    func probe(_ scene: String, _ probe: String) throws -> String {
        try box.write("probe.lua", try read(scene) + "\n" + probe + "\n")
        let r = try Tool.run(["probe.lua", "--check"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        return (r.stdout + r.stderr).split(separator: "\n").filter { !$0.hasPrefix("ok: ") && !$0.hasPrefix("wobble-run: warning") }.map { $0 + "\n" }.joined()
    }

    func testTheInspectorChangesStrengthMotionAndDurationAndCtrlSWritesExactlyThoseKeys() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 200, height: 150))
        try box.write("s.lua", StudioInspectorTests.body)
        let a = imageArea(200, 150)
        let (px, py, p) = panel(200, 150)
        let rows = p.rows()
        let spring = try XCTUnwrap(p.choices(.motion).first { $0.label == "spring" })
        let motionRow = try XCTUnwrap(rows.first { $0.row == .motion })
        let durationRow = try XCTUnwrap(rows.first { $0.row == .number("duration") })
        // The duration slider is logarithmic over all of (0, 3600]: half
        // way is about 19 s (to the key step of 0.05 s).
        let (sx, sw) = p.sliderX
        let half = px + sx + (sw - 1) / 2
        let spec = try XCTUnwrap(InspectorRow.spec("duration"))
        let halfValue = ((spec.value(atFraction: Double((sw - 1) / 2) / Double(sw - 1)) / 0.05).rounded() * 0.05 * 1e6).rounded() / 1e6
        XCTAssertTrue((15...25).contains(halfValue), "\(halfValue)")
        let halfText = SketchSource.formatParameter(halfValue)
        let clock = ManualClock()
        let t0 = clock.t
        var selectedAfterClick: Bool?
        let (status, surface, app) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.25, key(.space)),                                   // paused on frame 7
            (t0 + 0.30, key(.h)),                                       // the bare frame
            (t0 + 0.40, .select(x: a.x + 100, y: a.y + 75)),            // Ctrl+click inside: selects, no poke
            (t0 + 0.50, key(.down)), (t0 + 0.51, key(.down)), (t0 + 0.52, key(.down)),   // the strength row
            (t0 + 0.55, key(.pageUp)),                                  // +0.10: 0.18
            (t0 + 0.60, .mouseDown(x: px + spring.x + 2, y: py + motionRow.y + 20)),   // motion: spring
            (t0 + 0.61, .mouseUp(x: px + spring.x + 2, y: py + motionRow.y + 20)),
            (t0 + 0.70, .mouseDown(x: px + sx + 10, y: py + durationRow.y + 20)),      // the slider grabbed,
            (t0 + 0.72, .mouseMove(x: half, y: py + durationRow.y + 22)),              // dragged half way
            (t0 + 0.74, .mouseUp(x: half, y: py + durationRow.y + 22)),
            (t0 + 0.90, key(.s, ctrl: true)),
            (t0 + 1.10, .quit),
        ]) { surface, app in
            surface.actions = [(t0 + 0.45, { selectedAfterClick = app.session.performed.isEmpty })]
        }
        XCTAssertEqual(status, 0)
        XCTAssertEqual(selectedAfterClick, true, "a Ctrl+click does not poke")
        XCTAssertEqual(app.message, "saved s.lua: 1 sketch edited")
        let saved = try read("s.lua")
        XCTAssertEqual(saved, StudioInspectorTests.body.replacingOccurrences(
            of: "w = 120, h = 90}", with: "w = 120, h = 90, motion = \"spring\", duration = \(halfText), strength = 0.18}"),
                       "only those keys are written")
        XCTAssertEqual(try probe("s.lua", "print(string.format('%s %g %g %g', body.motion, body.duration, body.strength, body.threshold))"),
                       "spring \(String(format: "%g", halfValue)) 0.18 0.02\n")
        // The preview changed and is the saved scene's frame 7.
        let before = try XCTUnwrap(surface.picture(before: t0 + 0.4))
        let after = try XCTUnwrap(surface.picture(before: t0 + 0.9))
        XCTAssertGreaterThan(agreement(before, after).differing, 100, "the preview follows the parameters")
        let expected = try headlessFrames("s.lua", count: 8)
        XCTAssertEqual(before.width, expected[7].width)
        XCTAssertTrue(after == expected[7], "the preview is the saved scene's frame")
        XCTAssertTrue(before != expected[7])
        // The column showed the selection.
        XCTAssertNotNil(surface.panel)
    }

    /// Each slider spans every value `addSketch` accepts (the range the row
    /// shows): its ends are the smallest and largest, duration and threshold
    /// on a logarithmic scale (the values used most keep room), the others
    /// linear; the knob is where the value is.
    func testEverySliderSpansTheWholeRangeItShows() throws {
        for spec in InspectorRow.specs {
            XCTAssertEqual(spec.value(atFraction: 0), spec.valid.lowerBound, spec.key)
            XCTAssertEqual(spec.value(atFraction: 1), spec.valid.upperBound, accuracy: 1e-9, spec.key)
            XCTAssertEqual(spec.fraction(spec.valid.upperBound), 1, accuracy: 1e-12, spec.key)
            for f in [0.1, 0.25, 0.5, 0.9] {
                XCTAssertEqual(spec.fraction(spec.value(atFraction: f)), f, accuracy: 1e-9, spec.key)
            }
        }
        let duration = try XCTUnwrap(InspectorRow.spec("duration"))
        XCTAssertEqual(duration.validText, "(0, 3600]")
        // The default 1.2 s and 5 s are in the first half, 3600 s at the end.
        XCTAssertTrue((0.15...0.35).contains(duration.fraction(1.2)), "\(duration.fraction(1.2))")
        XCTAssertLessThan(duration.fraction(5), 0.5)
        let threshold = try XCTUnwrap(InspectorRow.spec("threshold"))
        XCTAssertLessThan(threshold.fraction(3.1), 0.6, "3.1 is not the slider's end")
        XCTAssertEqual(threshold.value(atFraction: 1), 1000)
        XCTAssertEqual(try XCTUnwrap(InspectorRow.spec("strength")).fraction(0.5), 0.5)
    }

    /// A space typed in a name is refused with the reason (the rest is
    /// typed, in place of the old name, which the rename starts with
    /// selected); an added region selected again is named once.
    func testASpaceInANameIsRefusedAndAnAddedRegionIsNamedOnce() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 200, height: 150))
        try box.write("s.lua", "image(\"img.png\")\nprepare()\nwait(0.5)\n")
        let a = imageArea(200, 150)
        let clock = ManualClock()
        let t0 = clock.t
        var messages: [String] = []
        let (status, _, _) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.10, .mouseMove(x: a.x + 100, y: a.y + 75)),
            (t0 + 0.15, key(.a)),
            (t0 + 0.20, key(.tab)),                 // the only region: selected again
            (t0 + 0.30, key(.enter)),
            (t0 + 0.35, .text("my body")),
            (t0 + 0.45, key(.enter)),
            (t0 + 0.60, key(.escape)), (t0 + 0.65, key(.escape)),
        ]) { surface, app in
            surface.actions = [(t0 + 0.25, { messages.append(app.message) }),
                               (t0 + 0.40, { messages.append(app.message) }),
                               (t0 + 0.50, { messages.append(app.message) })]
        }
        XCTAssertEqual(status, 0)
        XCTAssertEqual(messages, [
            "selected region1",
            "a space cannot be in a name: a name is a Lua name (letters, digits and _, not starting with a digit)",
            "renamed to mybody; Ctrl+S saves",
        ])
    }

    func testAAddsANamedRegionPresentFromFrameZeroRenamedInTheInspector() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 200, height: 150))
        let text = """
        image("img.png")
        local body = addSketch{x = 10, y = 10, w = 60, h = 60}
        wait(0.3)
        prepare()
        impulse(body, 1, 0.5)
        wait(0.5)

        """
        try box.write("s.lua", text)
        let a = imageArea(200, 150)
        let clock = ManualClock()
        let t0 = clock.t
        var messages: [String] = []
        let (status, _, app) = try runStudio("s.lua", clock: clock, script: [
            (t0, key(.space)), (t0 + 0.01, key(.home)),                 // paused at frame 0 (before the wait)
            (t0 + 0.10, .mouseMove(x: a.x + 120, y: a.y + 60)),
            (t0 + 0.20, key(.a)),                                       // region1, selected
            (t0 + 0.30, .mouseMove(x: a.x + 150, y: a.y + 100)),
            (t0 + 0.40, key(.a)),                                       // region2, selected
            (t0 + 0.50, key(.enter)),                                   // renamed:
            (t0 + 0.51, key(.backspace)), (t0 + 0.52, key(.backspace)), (t0 + 0.53, key(.backspace)),
            (t0 + 0.54, key(.backspace)), (t0 + 0.55, key(.backspace)), (t0 + 0.56, key(.backspace)),
            (t0 + 0.57, key(.backspace)),
            (t0 + 0.58, .text("cloud")),
            (t0 + 0.60, key(.enter)),
            (t0 + 0.70, .select(x: a.x + 40, y: a.y + 40)),             // body: used on line 5
            (t0 + 0.71, key(.enter)), (t0 + 0.715, key(.right)), (t0 + 0.72, .text("2")), (t0 + 0.73, key(.enter)),   // body2
            (t0 + 0.75, key(.escape)),                                  // (leaves the name as it was)
            (t0 + 0.80, key(.s, ctrl: true)),
            (t0 + 1.00, .quit),
        ]) { surface, app in
            surface.actions = [
                (t0 + 0.25, { messages.append(app.message) }),
                (t0 + 0.74, { messages.append(app.message) }),
            ]
        }
        XCTAssertEqual(status, 0)
        XCTAssertEqual(messages, ["added region1, 90x90 at (76, 16); Ctrl+S saves, Ctrl+Z undoes",
                                  "not renamed: body is used on line 5: rename it there too in a text editor (the studio renames the declaration only)"])
        let saved = try read("s.lua")
        let lines = "local region1 = addSketch{x = 76, y = 16, w = 90, h = 90}\nlocal cloud = addSketch{x = 106, y = 56, w = 90, h = 90}\n"
        XCTAssertEqual(saved, text.replacingOccurrences(of: "wait(0.3)", with: lines + "wait(0.3)"),
                       "named locals, rectangles of whole pixels, before the first wait")
        // Present from frame 0: the saved scene's sketches at time 0, and
        // a headless render's frame 0 with the overlay shows them.
        XCTAssertEqual(app.session.handleShapes(atFrame: 0).count, 3)
        XCTAssertEqual(try probe("s.lua", "print(string.format('%g %g %d', cloud.lt.x, cloud.rb.y, #wobbleModels()))"), "106 146 3\n")
        try box.write("orig.lua", text)
        for (scene, folder) in [("orig.lua", "o"), ("s.lua", "n")] {
            let r = try Tool.run([scene, "--backend", "cpu", "--overlay", "--frames", "0", "-q", "-o", folder + "/"], cwd: box.url)
            XCTAssertEqual(r.status, 0, r.stderr)
        }
        let o = try ImageIO.load(path: box.path("o/frame_00000.png")), n = try ImageIO.load(path: box.path("n/frame_00000.png"))
        XCTAssertGreaterThan(agreement(o, n) { x, y in x >= 70 && x <= 200 && y >= 10 && y <= 150 }.differing, 100,
                             "frame 0 of the headless render shows the added regions")
    }

    /// A rename starts with the old name selected, as every app's rename
    /// field does: typing replaces it (typing "body" on region1 gave
    /// "region1body"); Left keeps it and puts the caret at its start,
    /// Backspace deletes before the caret. Tab to the next region keeps
    /// the focused parameter row (Tab, +, Tab, + changes one parameter of
    /// region after region, as a property panel stays on its property when
    /// After Effects or Spine selects another layer or bone).
    func testARenameReplacesTheSelectedOldNameAndTabKeepsTheRow() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 200, height: 150))
        let text = """
        image("img.png")
        local body = addSketch{x = 10, y = 10, w = 60, h = 60}
        local ear = addSketch{x = 100, y = 40, w = 60, h = 60, motion = "spring"}
        prepare()
        wait(0.5)

        """
        try box.write("s.lua", text)
        let clock = ManualClock()
        let t0 = clock.t
        var messages: [String] = []
        var typed: [String?] = []
        var rows: [String] = []
        var strengths: [String] = []
        func focusedRow(_ app: StudioApp) -> String {
            guard let v = app.core.inspector.values() else { return "none" }
            return "\(v.name ?? "?"):\(v.rows[v.focused].key)"
        }
        func strength(_ app: StudioApp) -> String { app.core.inspector.values()?.rows.first { $0.key == "strength" }?.text ?? "?" }
        let (status, _, _) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.10, key(.tab)),                             // body
            (t0 + 0.15, key(.enter)),
            (t0 + 0.20, .text("torso")),
            (t0 + 0.25, key(.enter)),
            (t0 + 0.30, key(.enter)),
            (t0 + 0.31, key(.left)), (t0 + 0.32, .text("big_")), (t0 + 0.33, key(.backspace)),
            (t0 + 0.34, key(.right)), (t0 + 0.35, .text("s")),   // big|torso, one right: bigt|orso
            (t0 + 0.40, key(.enter)),
            (t0 + 0.45, key(.down)), (t0 + 0.46, key(.down)), (t0 + 0.47, key(.down)),   // strength
            (t0 + 0.50, key(.tab)),                             // ear: still strength
            (t0 + 0.55, key(.plus)),
            (t0 + 0.60, key(.down)),                            // ear's damping
            (t0 + 0.65, key(.tab, shift: true)),                // body's decay
            (t0 + 0.70, key(.s, ctrl: true)),
            (t0 + 0.90, key(.escape)),
        ]) { surface, app in
            surface.actions = [
                (t0 + 0.17, { typed.append(app.core.inspector.typing); typed.append(app.core.inspector.typingSelected ? "selected" : "not") }),
                (t0 + 0.22, { typed.append(app.core.inspector.typing) }),
                (t0 + 0.27, { messages.append(app.message) }),
                (t0 + 0.38, { typed.append(app.core.inspector.typing) }),
                (t0 + 0.42, { messages.append(app.message) }),
                (t0 + 0.48, { rows.append(focusedRow(app)) }),
                (t0 + 0.52, { rows.append(focusedRow(app)); strengths.append(strength(app)) }),
                (t0 + 0.57, { strengths.append(strength(app)) }),
                (t0 + 0.62, { rows.append(focusedRow(app)) }),
                (t0 + 0.67, { rows.append(focusedRow(app)) }),
            ]
        }
        XCTAssertEqual(status, 0)
        XCTAssertEqual(typed, ["body", "selected", "torso", "bigtsorso"])
        XCTAssertEqual(messages, ["renamed to torso; Ctrl+S saves", "renamed to bigtsorso; Ctrl+S saves"])
        XCTAssertEqual(rows, ["bigtsorso:strength", "ear:strength", "ear:damping", "bigtsorso:decay"])
        XCTAssertEqual(strengths.count, 2)
        XCTAssertNotEqual(strengths.first, strengths.last, "+ stepped the strength of the region Tab selected")
        let saved = try read("s.lua")
        XCTAssertTrue(saved.contains("local bigtsorso = addSketch{x = 10, y = 10, w = 60, h = 60}\n"), saved)
        XCTAssertTrue(saved.contains("local ear = addSketch{x = 100, y = 40, w = 60, h = 60, motion = \"spring\", strength = "), saved)
    }

    /// Esc with unsaved edits asks in the window; another key goes back;
    /// Esc twice quits with 0 and the file untouched. Closing, then Ctrl+S,
    /// saves and quits. The title carries the unsaved marker meanwhile.
    func testQuittingWithUnsavedEditsAsksFirst() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        let text = """
        image("img.png")
        addSketch{lt = {10, 10}, rt = {110, 10}, rb = {110, 80}, lb = {10, 80}}
        prepare()
        wait(0.5)

        """
        try box.write("s.lua", text)
        let a = imageArea(120, 90)
        let drag: [(Double, StudioInput)] = [
            (0.10, .mouseDown(x: a.x + 110, y: a.y + 80)),
            (0.15, .mouseMove(x: a.x + 105, y: a.y + 75)),
            (0.20, .mouseUp(x: a.x + 100, y: a.y + 70)),
        ]
        var clock = ManualClock()
        var t0 = clock.t
        var asked: [String] = []
        var running: [Bool] = []
        let first = try runStudio("s.lua", clock: clock, script: drag.map { (t0 + $0.0, $0.1) } + [
            (t0 + 0.30, key(.escape)),
            (t0 + 0.40, key(.space)),             // back to editing
            (t0 + 0.50, key(.escape)),
            (t0 + 0.60, key(.escape)),            // quits without saving
        ]) { surface, app in
            surface.actions = [
                (t0 + 0.35, { asked.append(app.message); running.append(true) }),
                (t0 + 0.45, { asked.append(app.message) }),
            ]
        }
        XCTAssertEqual(first.status, 0)
        XCTAssertEqual(asked, ["1 unsaved edit (the sketch of line 2): Esc again quits without saving, Ctrl+S saves and quits, any other key goes back",
                               "back to editing"])
        XCTAssertEqual(running, [true], "the window stays open after the first Esc")
        XCTAssertTrue(first.surface.frames.contains { $0.at > t0 + 0.5 }, "still presenting after Space")
        XCTAssertEqual(try read("s.lua"), text, "the file untouched")
        XCTAssertEqual(first.surface.titles, ["wobble-run edit: s.lua", "\u{2022} wobble-run edit: s.lua"])

        clock = ManualClock()
        t0 = clock.t
        let second = try runStudio("s.lua", clock: clock, script: drag.map { (t0 + $0.0, $0.1) } + [
            (t0 + 0.30, .quit),                    // the window's close
            (t0 + 0.40, key(.s, ctrl: true)),      // saves and quits
            (t0 + 5.00, .quit),
        ])
        XCTAssertEqual(second.status, 0)
        XCTAssertLessThan(second.surface.frames.last?.at ?? 99, t0 + 1, "it quit after saving")
        XCTAssertEqual(try read("s.lua"), text.replacingOccurrences(of: "rb = {110, 80}", with: "rb = {100, 70}"))
    }

    /// A drag, a comment appended by another program (the scene reloads),
    /// Ctrl+S: the file has both. Then the same constructor changed outside:
    /// Ctrl+S names the sketch and its line and writes nothing.
    func testAnotherProgramsSaveIsMergedOrNamedAsAConflict() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        let text = """
        image("img.png")
        local a = addSketch{lt = {10, 10}, rt = {110, 10}, rb = {110, 80}, lb = {10, 80}}
        prepare()
        wait(0.5)

        """
        try box.write("s.lua", text)
        let a = imageArea(120, 90)
        let clock = ManualClock()
        let t0 = clock.t
        var messages: [String] = []
        let conflicted = text.replacingOccurrences(of: "lt = {10, 10}", with: "lt = {12, 10}") + "-- again\n"
        let (status, _, app) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.10, .mouseDown(x: a.x + 110, y: a.y + 80)),
            (t0 + 0.15, .mouseMove(x: a.x + 105, y: a.y + 75)),
            (t0 + 0.20, .mouseUp(x: a.x + 100, y: a.y + 70)),
            (t0 + 0.50, key(.s, ctrl: true)),
            (t0 + 0.60, .mouseDown(x: a.x + 10, y: a.y + 10)),
            (t0 + 0.65, .mouseUp(x: a.x + 20, y: a.y + 15)),
            (t0 + 0.90, key(.s, ctrl: true)),
            (t0 + 1.00, key(.escape)), (t0 + 1.05, key(.escape)),
        ]) { surface, app in
            surface.actions = [
                (t0 + 0.30, {
                    try? self.box.write("s.lua", text + "-- a comment from the editor\n")
                    // Until the studio has reloaded it.
                    surface.holdWhile = { app.session.sceneText.map { String(decoding: $0, as: UTF8.self) } != text + "-- a comment from the editor\n" }
                }),
                (t0 + 0.40, { messages.append(app.message) }),
                (t0 + 0.70, {
                    try? self.box.write("s.lua", conflicted)
                    surface.holdWhile = { app.session.sceneText.map { String(decoding: $0, as: UTF8.self) } != conflicted }
                }),
                (t0 + 0.80, { messages.append(app.message) }),
                (t0 + 0.95, { messages.append(app.message) }),
            ]
        }
        XCTAssertEqual(status, 0)
        let conflict = "not saved: a (\(box.path("s.lua")):2) was changed on disk as well; the edits stay pending (Ctrl+Z undoes them)"
        XCTAssertEqual(messages, ["s.lua changed on disk: Ctrl+S saves the unsaved edits into it", conflict, conflict])
        XCTAssertEqual(try read("s.lua"), conflicted, "nothing written on a conflict")
        XCTAssertTrue(app.session.hasUnsavedEdits, "the edits stay pending")
    }

    /// The reported data loss, in the window: a drag pending on `body`, an
    /// editor deletes body's line, Ctrl+S. The save is refused naming body
    /// and ear's line survives byte for byte; Ctrl+Z drops the edit and the
    /// next Ctrl+S has nothing to save.
    func testADeletedEditedLineIsRefusedInTheWindowAndCtrlZDropsTheEdit() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        let text = """
        image("img.png")
        local body = addSketch{lt = {10, 10}, rt = {60, 10}, rb = {60, 80}, lb = {10, 80}}
        local ear = addSketch{x = 70, y = 10, w = 40, h = 40, strength = 0.2}
        prepare()
        wait(0.5)

        """
        try box.write("s.lua", text)
        let deleted = text.replacingOccurrences(of: "local body = addSketch{lt = {10, 10}, rt = {60, 10}, rb = {60, 80}, lb = {10, 80}}\n", with: "")
        let a = imageArea(120, 90)
        let clock = ManualClock()
        let t0 = clock.t
        var messages: [String] = []
        let (status, _, app) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.10, .mouseDown(x: a.x + 60, y: a.y + 80)),
            (t0 + 0.15, .mouseMove(x: a.x + 55, y: a.y + 75)),
            (t0 + 0.20, .mouseUp(x: a.x + 50, y: a.y + 70)),
            (t0 + 0.50, key(.s, ctrl: true)),
            (t0 + 0.60, key(.z, ctrl: true)),
            (t0 + 0.70, key(.s, ctrl: true)),
            (t0 + 0.80, key(.escape)),
        ]) { surface, app in
            surface.actions = [
                (t0 + 0.30, {
                    try? self.box.write("s.lua", deleted)
                    surface.holdWhile = { app.session.sceneText.map { String(decoding: $0, as: UTF8.self) } != deleted }
                }),
                (t0 + 0.55, { messages.append(app.message) }),
                (t0 + 0.65, { messages.append(app.message) }),
                (t0 + 0.75, { messages.append(app.message) }),
            ]
        }
        XCTAssertEqual(status, 0, "Esc quits at once: nothing unsaved")
        XCTAssertEqual(messages, [
            "not saved: body (\(box.path("s.lua")):2) was deleted on disk; the edit stays pending — Ctrl+Z drops it",
            "dropped the edit of body (\(box.path("s.lua")):2) (was deleted on disk): no unsaved edits",
            "nothing to save"])
        XCTAssertEqual(try read("s.lua"), deleted, "ear's line byte for byte")
        XCTAssertFalse(app.session.hasUnsavedEdits)
    }

    /// The scene file deleted while an edit is pending: Ctrl+S says so and
    /// offers `s.unsaved.lua`, Ctrl+S again writes it; quitting with edits
    /// and the file gone writes the edits there at once and says so.
    func testASceneFileGoneOffersAndWritesTheUnsavedFile() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        let text = """
        image("img.png")
        local body = addSketch{lt = {10, 10}, rt = {110, 10}, rb = {110, 80}, lb = {10, 80}}
        prepare()
        wait(0.5)

        """
        let edited = text.replacingOccurrences(of: "rb = {110, 80}", with: "rb = {100, 70}")
        let a = imageArea(120, 90)
        let drag: [(Double, StudioInput)] = [
            (0.10, .mouseDown(x: a.x + 110, y: a.y + 80)),
            (0.15, .mouseMove(x: a.x + 105, y: a.y + 75)),
            (0.20, .mouseUp(x: a.x + 100, y: a.y + 70)),
        ]
        for quitting in [false, true] {
            try box.write("s.lua", text)
            let clock = ManualClock()
            let t0 = clock.t
            var messages: [String] = []
            let keys: [(Double, StudioInput)] = quitting
                ? [(t0 + 0.50, key(.escape)), (t0 + 5, key(.escape)), (t0 + 5.1, key(.escape))]
                : [(t0 + 0.50, key(.s, ctrl: true)), (t0 + 0.60, key(.s, ctrl: true)),
                   (t0 + 0.80, key(.escape)), (t0 + 0.90, key(.escape))]
            let (status, surface, _) = try runStudio("s.lua", clock: clock, script: drag.map { (t0 + $0.0, $0.1) } + keys) { surface, app in
                surface.actions = [
                    (t0 + 0.30, {
                        try? FileManager.default.removeItem(atPath: self.box.path("s.lua"))
                        // Until the studio has noticed (its reload fails): the
                        // message after that is the save's.
                        surface.holdWhile = { app.sceneError == nil }
                    }),
                    (t0 + 0.55, { messages.append(app.message) }),
                    (t0 + 0.65, { messages.append(app.message) }),
                ]
            }
            XCTAssertEqual(status, 0)
            XCTAssertEqual(try read("s.unsaved.lua"), edited, "quitting: \(quitting)")
            if quitting {
                XCTAssertLessThan(surface.frames.last?.at ?? 99, t0 + 1, "it quit at the first Esc")
            } else {
                XCTAssertEqual(messages, [
                    "not saved: \(box.path("s.lua")) is gone from disk (deleted or renamed); the edits stay pending — Ctrl+S again writes them to s.unsaved.lua",
                    "s.lua is gone: the unsaved edits are in \(box.path("s.unsaved.lua"))"])
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("s.lua")), "nothing written at the scene's path")
            // Quitting after Ctrl+S wrote them: the same text is not written
            // again as s.unsaved-2.lua.
            XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("s.unsaved-2.lua")), "quitting: \(quitting)")
            try FileManager.default.removeItem(atPath: box.path("s.unsaved.lua"))
        }
    }

    /// A real conflict, then every edit undone: the file is in sync again
    /// (no unsaved marker in the title, nothing to save, nothing asked on
    /// quitting), and the other program's change is what plays.
    func testUndoingEveryEditAfterAConflictLeavesNothingUnsaved() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        let text = """
        image("img.png")
        local a = addSketch{lt = {10, 10}, rt = {110, 10}, rb = {110, 80}, lb = {10, 80}}
        prepare()
        wait(0.5)

        """
        try box.write("s.lua", text)
        let a = imageArea(120, 90)
        let clock = ManualClock()
        let t0 = clock.t
        var messages: [String] = []
        var titles: [String] = []
        let conflicted = text.replacingOccurrences(of: "lt = {10, 10}", with: "lt = {12, 10}")
        let (status, surface, app) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.10, .mouseDown(x: a.x + 10, y: a.y + 10)),
            (t0 + 0.15, .mouseMove(x: a.x + 15, y: a.y + 12)),
            (t0 + 0.20, .mouseUp(x: a.x + 20, y: a.y + 15)),
            (t0 + 0.30, .mouseDown(x: a.x + 110, y: a.y + 80)),
            (t0 + 0.35, .mouseUp(x: a.x + 100, y: a.y + 70)),
            (t0 + 0.60, key(.s, ctrl: true)),                   // the conflict
            (t0 + 0.70, key(.z, ctrl: true)),
            (t0 + 0.80, key(.z, ctrl: true)),                   // every edit undone
            (t0 + 0.90, key(.s, ctrl: true)),
            (t0 + 1.00, key(.escape)),                          // quits at once
        ]) { surface, app in
            surface.actions = [
                (t0 + 0.40, {
                    try? self.box.write("s.lua", conflicted)
                    surface.holdWhile = { app.session.sceneText.map { String(decoding: $0, as: UTF8.self) } != conflicted }
                }),
                (t0 + 0.65, { messages.append(app.message) }),
                (t0 + 0.85, { messages.append(app.message); titles = surface.titles }),
                (t0 + 0.95, { messages.append(app.message) }),
            ]
        }
        XCTAssertEqual(status, 0)
        XCTAssertEqual(messages, [
            "not saved: a (\(box.path("s.lua")):2) was changed on disk as well; the edits stay pending (Ctrl+Z undoes them)",
            "undone: no unsaved edits", "nothing to save"])
        XCTAssertEqual(titles.last, "wobble-run edit: s.lua", "no unsaved marker")
        XCTAssertFalse(app.session.hasUnsavedEdits)
        XCTAssertEqual(try read("s.lua"), conflicted)
        XCTAssertEqual(app.session.handleShapes(atFrame: 0).first?.shape.lt, Point(12, 10), "the other program's change plays")
        XCTAssertTrue(surface.script.isEmpty)
    }

    /// Another program inserts an `addSketch` before the one dragged: the
    /// save writes the drag into that one (it followed its call) and leaves
    /// the new line as written.
    func testAnEditFollowsItsSketchWhenAnotherProgramInsertsOneBeforeIt() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        let text = """
        image("img.png")
        local a = addSketch{lt = {10, 10}, rt = {110, 10}, rb = {110, 80}, lb = {10, 80}}
        prepare()
        wait(0.5)

        """
        try box.write("s.lua", text)
        let a = imageArea(120, 90)
        let clock = ManualClock()
        let t0 = clock.t
        let inserted = text.replacingOccurrences(of: "local a", with: "local b = addSketch{x = 40, y = 30, w = 20, h = 20}\nlocal a")
        var messages: [String] = []
        let (status, _, _) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.10, .mouseDown(x: a.x + 110, y: a.y + 80)),
            (t0 + 0.20, .mouseUp(x: a.x + 100, y: a.y + 70)),
            (t0 + 0.50, key(.s, ctrl: true)),
            (t0 + 0.60, .quit),
        ]) { surface, app in
            surface.actions = [
                (t0 + 0.30, {
                    try? self.box.write("s.lua", inserted)
                    surface.holdWhile = { app.session.sceneText.map { String(decoding: $0, as: UTF8.self) } != inserted || app.session.isRunning }
                }),
                (t0 + 0.40, { messages.append(app.message) }),
                (t0 + 0.55, { messages.append(app.message) }),
            ]
        }
        XCTAssertEqual(status, 0)
        XCTAssertEqual(messages, ["s.lua changed on disk: Ctrl+S saves the unsaved edits into it", "saved s.lua: 1 sketch edited"])
        XCTAssertEqual(try read("s.lua"), inserted.replacingOccurrences(of: "rb = {110, 80}", with: "rb = {100, 70}"))
    }

    /// The merge's first half on its own, the comment appended by another
    /// process (`sh -c 'echo ... >> s.lua'`): the file after the save has both.
    func testADragAndAnAppendedCommentAreBothSaved() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        let text = "image(\"img.png\")\nlocal a = addSketch{lt = {10, 10}, rt = {110, 10}, rb = {110, 80}, lb = {10, 80}}\nprepare()\nwait(0.5)\n"
        try box.write("s.lua", text)
        let a = imageArea(120, 90)
        let clock = ManualClock()
        let t0 = clock.t
        let (status, _, _) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.10, .mouseDown(x: a.x + 110, y: a.y + 80)),
            (t0 + 0.20, .mouseUp(x: a.x + 100, y: a.y + 70)),
            (t0 + 0.50, key(.s, ctrl: true)),
            (t0 + 0.60, .quit),
        ]) { surface, app in
            surface.actions = [(t0 + 0.30, {
                let r = try? Tool.exec("/bin/sh", ["-c", "echo '-- a comment from the editor' >> s.lua"], cwd: self.box.url)
                XCTAssertEqual(r?.status, 0)
                surface.holdWhile = { app.session.sceneText.map { String(decoding: $0, as: UTF8.self) } != text + "-- a comment from the editor\n" }
            })]
        }
        XCTAssertEqual(status, 0)
        XCTAssertEqual(try read("s.lua"), text.replacingOccurrences(of: "rb = {110, 80}", with: "rb = {100, 70}")
                       + "-- a comment from the editor\n")
    }

    /// Undo past a save: the next save writes the values the file had
    /// before; redo, and the save after writes the edit again.
    func testUndoAndRedoAcrossSaves() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        let text = """
        image("img.png")
        local a = addSketch{lt = {10, 10}, rt = {110, 10}, rb = {110, 80}, lb = {10, 80}, strength = 0.1}
        prepare()
        wait(0.5)

        """
        try box.write("s.lua", text)
        let a = imageArea(120, 90)
        let edited = text.replacingOccurrences(of: "rb = {110, 80}", with: "rb = {100, 70}")
        let clock = ManualClock()
        let t0 = clock.t
        var files: [String] = []
        let (status, _, _) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.10, .mouseDown(x: a.x + 110, y: a.y + 80)),
            (t0 + 0.20, .mouseUp(x: a.x + 100, y: a.y + 70)),
            (t0 + 0.30, key(.s, ctrl: true)),
            (t0 + 0.40, key(.z, ctrl: true)),               // past the save
            (t0 + 0.50, key(.s, ctrl: true)),
            (t0 + 0.60, key(.z, shift: true, ctrl: true)),  // redo
            (t0 + 0.70, key(.s, ctrl: true)),
            (t0 + 0.80, .quit),
        ]) { surface, _ in
            surface.actions = [(t0 + 0.35, { files.append((try? self.read("s.lua")) ?? "") }),
                               (t0 + 0.55, { files.append((try? self.read("s.lua")) ?? "") })]
        }
        XCTAssertEqual(status, 0)
        XCTAssertEqual(files, [edited, text], "undo past the save restored the saved values on the next save")
        XCTAssertEqual(try read("s.lua"), edited, "redo re-applied")
    }

    /// Tab selects the regions in turn; the selected one's handles are
    /// drawn in cyan; a computed sketch is shown read-only with its line
    /// and its parameters cannot be changed.
    func testTabSelectsTheSelectionIsDrawnAndComputedSketchesAreReadOnly() throws {
        try box.writeImage("img.png", RGBAImage(width: 160, height: 100, pixels: [UInt8](repeating: 230, count: 160 * 100 * 4)))
        let text = """
        image("img.png")
        local a = addSketch{x = 10, y = 10, w = 50, h = 50}
        local size = 50
        addSketch{x = 90, y = 10, w = size, h = size, strength = 0.2}
        prepare()
        wait(0.5)

        """
        try box.write("s.lua", text)
        let clock = ManualClock()
        let t0 = clock.t
        var said: [String] = []
        let (status, surface, app) = try runStudio("s.lua", clock: clock, script: [
            (t0, key(.space)),
            (t0 + 0.10, key(.tab)),
            (t0 + 0.20, key(.tab)),
            (t0 + 0.30, key(.down)), (t0 + 0.31, key(.down)), (t0 + 0.32, key(.down)),
            (t0 + 0.33, key(.plus)),
            (t0 + 0.40, .quit),
        ]) { surface, app in
            surface.actions = [
                (t0 + 0.15, { said.append(app.message) }),
                (t0 + 0.25, { said.append(app.message) }),
                (t0 + 0.35, { said.append(app.message) }),
            ]
        }
        XCTAssertEqual(status, 0)
        XCTAssertEqual(said, ["selected a, the sketch of line 2",
                              "selected the sketch of line 4 (computed: read-only; edit line 4 of the script)",
                              "this sketch is computed: read-only; edit line 4 of the script"])
        XCTAssertFalse(app.session.hasUnsavedEdits)
        func cyan(_ img: RGBAImage?, _ x0: Int, _ x1: Int) -> Int {
            guard let img else { return 0 }
            var n = 0
            for y in 0..<img.height { for x in x0..<x1 { let p = img.pixel(x, y); if p.r < 80 && p.g > 180 && p.b > 220 { n += 1 } } }
            return n
        }
        let first = surface.picture(before: t0 + 0.2), second = surface.picture(before: t0 + 0.3)
        XCTAssertEqual(cyan(surface.picture(before: t0 + 0.1), 0, 160), 0, "nothing selected yet")
        XCTAssertGreaterThan(cyan(first, 0, 75), 50, "the first region drawn selected")
        XCTAssertEqual(cyan(first, 80, 160), 0)
        XCTAssertGreaterThan(cyan(second, 80, 160), 50, "then the second")
        XCTAssertEqual(cyan(second, 0, 75), 0)
        // The column shows the strength of the computed one, 0.2.
        XCTAssertEqual(surface.panel?.x, Layout(imageWidth: 160, imageHeight: 100, screen: (1920, 1080)).panelRect.x)
    }
}
