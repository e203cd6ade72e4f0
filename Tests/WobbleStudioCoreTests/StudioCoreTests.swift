import Foundation
import XCTest
import WobbleCore
import WobbleEngine
import WobbleTestSupport
@testable import WobbleStudioCore
import WobbleSystem

/// The studio core with no window: a scene in a sandbox, commands in
/// (image pixels, no keys), state and snapshots out, on a manual clock
/// (a run of the scene is awaited, never slept for).
final class StudioCoreTests: StudioCoreTestCase {
    /// `s.lua` on a 200x150 picture: one region, a half-second clip.
    let text = """
    image("img.png")
    addSketch{x = 10, y = 10, w = 40, h = 40}
    prepare()
    wait(0.5)

    """

    func makeCore() throws -> StudioCore {
        try box.writeImage("img.png", Sandbox.pattern(width: 200, height: 150))
        try box.write("s.lua", text)
        let core = startedCore()
        return core
    }

    /// A take is written on a worker, in-process: the core goes on
    /// answering while its scene runs to check it, and a take cancelled
    /// meanwhile leaves neither the take nor the hidden file it is checked
    /// from, and says so. (The scene is slow only when it runs as the check.)
    func testATakeIsWrittenOnAWorkerAndCancelled() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 200, height: 150))
        try box.write("s.lua", """
        image("img.png")
        if arg[0]:find("take%-check") then for i = 1, 2000000000 do end end
        addSketch{x = 10, y = 10, w = 40, h = 40}
        prepare()
        wait(0.5)

        """)
        let core = startedCore { $0.timeout = 60 }
        core.perform(.toggleRecording)
        clock.t += 0.2
        core.perform(.pokeBegin(Point(20, 20)))
        core.perform(.pokeEnd(Point(30, 20)))
        core.perform(.toggleRecording)
        XCTAssertTrue(core.recorder.isWriting)
        XCTAssertEqual(core.message, "writing the take (its scene runs once to check it)...")
        // The core answers while the check runs.
        core.perform(.home)
        XCTAssertEqual(core.playhead, 0)
        core.perform(.toggleRecording)
        XCTAssertEqual(core.message, "the last take is still being written: R again when it is done")
        XCTAssertFalse(core.recorder.isRecording)
        XCTAssertFalse(core.recorder.waitForWrite(upTo: 0.3), "the check ended while it should still run")
        XCTAssertTrue(box.files().contains { $0.hasPrefix(".s-take-check") }, "\(box.files())")
        core.recorder.cancel("stopped by the test")
        XCTAssertFalse(core.recorder.isWriting)
        XCTAssertTrue(core.messageIsError)
        XCTAssertEqual(core.message, "take not written (the performance is on stderr): cancelled: stopped by the test")
        XCTAssertEqual(box.files().sorted(), ["img.png", "s.lua"], "no take, no hidden check file")
    }

    func testCommandsAddUndoPokeSaveAndQuit() throws {
        let core = try makeCore()
        XCTAssertEqual(core.session.clip?.frameCount, 15)
        XCTAssertEqual(core.title, "wobble-run edit: s.lua")
        XCTAssertFalse(core.perform(.togglePlay), "a command that does not quit")
        XCTAssertFalse(core.playing)
        core.perform(.home)
        XCTAssertEqual(core.playhead, 0)

        // A: a 90x90 region at a point, selected; the title marks it unsaved.
        core.perform(.add(at: Point(100, 75)))
        settle(core)
        XCTAssertEqual(core.session.edits.added.count, 1)
        XCTAssertEqual(core.inspector.selected, .added(0))
        XCTAssertEqual(core.title, "\u{2022} wobble-run edit: s.lua")
        XCTAssertEqual(core.snapshot().inspector?.rows.first?.key, "name")
        // The inspector by command: a parameter set, a name typed and kept.
        core.perform(.setParameter(key: "strength", value: 0.5))
        XCTAssertEqual(core.session.currentState(.added(0))?.parameters.strength, 0.5)
        core.perform(.setParameter(key: "colour", value: 1))
        XCTAssertTrue(core.messageIsError, core.message)
        core.perform(.startRename)
        XCTAssertEqual(core.inspector.typing, "region1", "typing starts from the name")
        for _ in 0..<7 { core.perform(.renameBackspace) }
        core.perform(.type("blob"))
        core.perform(.commitRename)
        XCTAssertEqual(core.session.currentState(.added(0))?.name, "blob")
        // Undo takes every edit back, one at a time.
        for _ in 0..<3 { core.perform(.undo) }
        settle(core)
        XCTAssertEqual(core.message, "undone: no unsaved edits")
        XCTAssertFalse(core.session.hasUnsavedEdits)

        // A poke inside the live region at the playhead's time; one outside is refused.
        core.perform(.pokeBegin(Point(150, 140)))
        XCTAssertEqual(core.message, "(150.0, 140.0) is not inside a live region")
        core.perform(.pokeBegin(Point(20, 20)))
        core.perform(.pokeEnd(Point(40, 30)))
        settle(core)
        XCTAssertEqual(core.session.performed, [PerformedEvent(time: 0, action: .touch(from: Point(20, 20), to: Point(40, 30)))])
        XCTAssertEqual(core.message, "touch(20.0, 20.0, 40.0, 30.0) at 0.000 s")
        // Its tick says what takes it away (Backspace with a selection deletes that instead).
        XCTAssertEqual(core.ticks.filter(\.performed).map(\.label),
                       ["touch performed at 0.000 s (not in the scene: with nothing selected Backspace forgets the pokes; R records a take)"])
        core.perform(.forgetPokes)
        XCTAssertEqual(core.message, "pokes forgotten")

        // A handle dragged by command: grabbed within the radius, moved, saved.
        XCTAssertNil(core.grabbable(at: Point(100, 100), radius: 3), "no handle there")
        core.perform(.grab(at: Point(11, 11), radius: 3))
        XCTAssertTrue(core.editor.isDragging)
        core.perform(.dragTo(Point(5.04, 6.96)))
        core.perform(.dragEnd)
        settle(core)
        XCTAssertEqual(core.session.currentState(.call(0))?.points.lt, Point(5, 7), "to a tenth of a pixel")
        XCTAssertTrue(core.message.hasPrefix("lt moved to (5, 7)"), core.message)
        // Esc with unsaved edits asks; the answer saves and quits.
        XCTAssertFalse(core.perform(.quit(closing: false)))
        XCTAssertTrue(core.isAskingToQuit)
        XCTAssertTrue(core.snapshot().askingToQuit)
        XCTAssertTrue(core.perform(.answerQuit(.saveAndQuit)))
        XCTAssertEqual(try String(contentsOfFile: box.path("s.lua"), encoding: .utf8),
                       text.replacingOccurrences(of: "addSketch{x = 10, y = 10, w = 40, h = 40}",
                                                 with: "addSketch{lt = {5, 7}, rt = {50, 10}, rb = {50, 50}, lb = {10, 50}}"))
        core.finish()
    }

    func testTransportLoopAndRecordingRefusalsByCommand() throws {
        let core = try makeCore()
        core.perform(.step(1))
        core.perform(.step(1))
        XCTAssertEqual(core.currentIndex, 2)
        XCTAssertEqual(core.snapshot().frame, 2)
        core.perform(.home)
        XCTAssertEqual(core.currentIndex, 0)
        core.perform(.seek(frame: 99))
        XCTAssertEqual(core.currentIndex, 14, "clamped to the clip")
        core.perform(.toggleLoop)
        settle(core)
        XCTAssertNotNil(core.session.clip?.loop)
        XCTAssertTrue(core.message.hasPrefix("loop on"), core.message)
        // An unsaved loop() is an edit: Esc asks (it quit at once and lost it).
        XCTAssertFalse(core.perform(.quit(closing: false)))
        XCTAssertTrue(core.isAskingToQuit)
        XCTAssertTrue(core.message.hasPrefix("1 unsaved edit (loop() on): Esc again quits without saving"), core.message)
        XCTAssertFalse(core.perform(.answerQuit(.back)))
        core.perform(.toggleLoop)
        settle(core)
        XCTAssertNil(core.session.clip?.loop)
        // Recording: a shake is a take event; what a take refuses says so.
        core.perform(.toggleRecording)
        XCTAssertTrue(core.recorder.isRecording)
        core.perform(.save)
        XCTAssertEqual(core.message, "recording: R stops it and writes the take")
        core.perform(.unbound)
        XCTAssertEqual(core.message, "recording: R stops it and writes the take")
        clock.t += 0.25
        core.perform(.shake(ax: 1.5, ay: 0))
        XCTAssertEqual(core.message, "shake(1.500, 0.000) at +0.250 s")
        core.perform(.toggleRecording)
        XCTAssertFalse(core.recorder.isRecording)
        // Written on a worker: the core goes on answering meanwhile.
        XCTAssertEqual(core.message, "writing the take (its scene runs once to check it)...")
        XCTAssertTrue(core.recorder.waitForWrite(upTo: 60), "the take's write did not end")
        settle(core)
        XCTAssertTrue(core.message.hasPrefix("wrote ") && core.message.hasSuffix("s-take-1.lua (1 event)"), core.message)
        // The export chooser by command: opened, moved, cancelled.
        core.perform(.openExportChooser)
        XCTAssertEqual(core.chooser?.row, 0)
        core.perform(.chooserMove(-1))
        XCTAssertEqual(core.snapshot().chooserRow, PresetChooser.choices.count - 1, "wraps")
        core.perform(.chooserCancel)
        XCTAssertNil(core.chooser)
        XCTAssertEqual(core.message, "export cancelled")
        core.perform(.export(preset: "nowhere"))
        XCTAssertTrue(core.messageIsError && core.message.hasPrefix("no preset 'nowhere'"), core.message)
        XCTAssertTrue(core.perform(.quit(closing: true)), "no unsaved edits: quits at once")
        core.finish()
    }

    /// `Shift+E` Discord from the studio core and the command line's
    /// `--preset discord` of the same scene, neither naming a backend (the
    /// engine's choice, `auto`, for both): the same bytes. (The window drew
    /// its exports on GLES, the command line on the CPU where the GL is a
    /// software one: a few bytes differed.)
    func testAPresetExportIsTheCommandLinesPresetByteForByte() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 160, height: 120, checker: 5))
        try box.write("s.lua", """
        image("img.png")
        local a = addSketch{x = 20, y = 15, w = 110, h = 90}
        prepare()
        impulse(a, 1, 0.5)
        wait(0.6)

        """)
        let options = SessionOptions(scenePath: box.path("s.lua"))
        XCTAssertEqual(options.backend, .auto, "a session renders with the engine's choice, as a render does")
        let core = StudioCore(session: options, verbose: false, clock: clock,
                              audio: { throw AudioUnavailable(description: "no audio device in the tests") })
        core.start()
        settle(core)
        core.perform(.export(preset: "discord"))
        XCTAssertTrue(core.exporter.waitForExport(upTo: 300), "the export did not end")
        clock.t += 0.01
        core.tick()
        XCTAssertTrue(core.message.hasPrefix("discord: "), core.message)
        XCTAssertFalse(core.messageIsError, core.message)
        core.finish()
        let r = try Tool.run(["s.lua", "--preset", "discord", "-q", "-o", "cli.png"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        let cmp = try Tool.exec("cmp", [box.path("s-discord.png"), box.path("cli.png")])
        XCTAssertEqual(cmp.status, 0, "the window's export and the command line's, byte for byte: \(String(decoding: cmp.stdout, as: UTF8.self))")
    }

    /// Commands, snapshots, frame states and performed events survive JSON.
    func testCommandsAndSnapshotsRoundTripThroughJSON() throws {
        let core = try makeCore()
        core.perform(.add(at: Point(100, 75)))
        core.perform(.pokeBegin(Point(20, 20)))
        core.perform(.pokeEnd(Point(40, 30)))
        settle(core)
        core.perform(.home)
        core.perform(.step(3))
        let snapshot = core.snapshot()
        XCTAssertEqual(snapshot.frame, 3)
        XCTAssertFalse(snapshot.handles.isEmpty)
        XCTAssertNotNil(snapshot.frameState)
        XCTAssertEqual(snapshot.performed.count, 1)
        XCTAssertTrue(snapshot.unsaved)
        func roundTrip<T: Codable & Equatable>(_ v: T, _ what: String) throws {
            let data = try JSONEncoder().encode(v)
            XCTAssertEqual(try JSONDecoder().decode(T.self, from: data), v, what)
        }
        try roundTrip(snapshot, "a snapshot")
        try roundTrip(try XCTUnwrap(snapshot.frameState), "a frame state")
        try roundTrip(core.session.performed, "performed events")
        let commands: [StudioCommand] = [
            .togglePlay, .step(-1), .seek(frame: 4), .quit(closing: true), .answerQuit(.saveAndQuit), .add(at: Point(1, 2)),
            .grab(at: Point(3, 4), radius: 2.5), .dragTo(Point(5, 6)), .select(at: Point(1, 1), radius: 10), .setMotion("spring"),
            .setPin(nil), .setPin(.bottom), .setParameter(key: "strength", value: 0.25), .type("blob"),
            .inspectorPress(row: 2, choice: nil, fraction: 0.5), .shake(ax: 1.5, ay: 0), .accelerometer(x: 0.1, y: 0.9),
            .pressTick(snapshot.ticks.first), .dragTick(to: 0.2), .strokeBegin(at: Point(7, 8), radius: 6, object: true),
            .export(preset: "Discord"), .export(preset: nil), .chooserChoose(nil), .chooserChoose(3), .unbound,
            .hoverTimeline(at: 0.25, within: 0.01), .hoverTimeline(at: nil, within: 0),
        ]
        try roundTrip(commands, "commands")
        core.finish()
    }

    /// The core is front-end neutral: none of its files imports the window
    /// system, EGL, GL or the renderers.
    /// A key means what the studio's state says: the inspector's keys with
    /// a region selected, a name's keys while one is typed, the chooser's
    /// while it is open, the question's while it is asked, else the plain
    /// map (the window and a page both ask this).
    func testAKeyIsTheCommandOfTheStudiosState() throws {
        let core = try makeCore()
        func key(_ k: StudioKey, shift: Bool = false, ctrl: Bool = false) -> StudioCommand? {
            StudioKeyMap.command(for: k, shift: shift, ctrl: ctrl, in: core, addAt: { Point(30, 30) })
        }
        XCTAssertEqual(key(.a), .add(at: Point(30, 30)))
        XCTAssertEqual(key(.s, ctrl: true), .save)
        XCTAssertEqual(key(.z, shift: true, ctrl: true), .redo)
        XCTAssertEqual(key(.left, shift: true), .shake(ax: -1.5, ay: 0))
        XCTAssertEqual(key(.up), .unbound, "Up without a selection: nothing of its own")
        XCTAssertEqual(key(.tab), .selectNext(1))
        core.perform(.selectNext(1))
        XCTAssertNotNil(core.inspector.selected)
        XCTAssertEqual(key(.up), .focusRow(by: -1))
        XCTAssertEqual(key(.enter), .startRename)
        core.perform(.startRename)
        XCTAssertEqual(key(.enter), .commitRename)
        XCTAssertNil(key(.a), "a name's characters come as text")
        XCTAssertEqual(StudioKeyMap.commands(text: "x", renaming: core.inspector.isRenaming, choosing: false), [.type("x")])
        core.perform(.cancelRename)
        core.perform(.openExportChooser)
        XCTAssertEqual(key(.up), .chooserMove(-1))
        XCTAssertEqual(key(.escape), .chooserCancel)
        XCTAssertEqual(core.snapshot().chooserChoices?.count, PresetChooser.choices.count)
        XCTAssertTrue(core.snapshot().chooserChoices?.contains { $0.hasPrefix("telegram ") } ?? false)
        core.perform(.chooserCancel)
        XCTAssertNil(core.snapshot().chooserChoices)
        core.perform(.add(at: Point(100, 75)))
        XCTAssertFalse(core.perform(.quit(closing: false)), "unsaved edits: asks first")
        XCTAssertEqual(key(.escape), .answerQuit(.quit))
        XCTAssertEqual(key(.a), .answerQuit(.back))
    }

    /// The tick under the pointer is the core's, found among the ticks as
    /// they are now: after `Delete` the status names the deleted tick no
    /// more (the window kept its label until the mouse moved), after the
    /// undo it names it again, and off the timeline nothing is named.
    func testTheHoveredTickIsNamedFromTheTicksThereAreNow() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 200, height: 150))
        try box.write("s.lua", """
        image("img.png")
        addSketch{x = 10, y = 10, w = 40, h = 40}
        prepare()
        wait(0.2)
        touch(20, 20, 30, 20)
        wait(0.3)

        """)
        let core = startedCore()
        let label = "touch at 0.200 s, s.lua line 5 (click selects, Delete deletes)"
        core.perform(.hoverTimeline(at: 0.21, within: 0.02))
        XCTAssertEqual(core.hoveredTick?.label, label)
        XCTAssertEqual(core.snapshot().hovered, label)
        core.perform(.hoverTimeline(at: 0.25, within: 0.02))
        XCTAssertNil(core.snapshot().hovered, "no tick within reach")
        core.perform(.hoverTimeline(at: 0.2, within: 0.02))
        core.perform(.pressTick(core.hoveredTick))
        core.perform(.deleteSelected)
        settle(core)
        XCTAssertEqual(core.message, "deleted the kick of line 5 (Ctrl+S takes it out of the scene; Ctrl+Z brings it back)")
        XCTAssertFalse(core.ticks.contains { $0.label == label })
        XCTAssertNil(core.snapshot().hovered, "the deleted tick is named no more")
        core.perform(.undo)
        settle(core)
        XCTAssertEqual(core.snapshot().hovered, label, "back with the undo, under the same pointer")
        core.perform(.hoverTimeline(at: nil, within: 0))
        XCTAssertNil(core.snapshot().hovered)
        core.finish()
    }

    /// The chooser says how each platform's file is made to fit, as
    /// `--preset` does it: Telegram's VP9 in two passes (the quality is
    /// searched only where they cannot), APNG by its colour levels, the
    /// others by their quality; Discord's two formats, the closer kept.
    func testTheChooserSaysHowEachPresetFits() throws {
        let said = Dictionary(uniqueKeysWithValues: Preset.all.map { ($0.name, PresetChooser.label($0).limits) })
        XCTAssertEqual(said["telegram"], PresetChooser.limits(try Preset.named("telegram"))
                       + "; two passes at the bitrate that fills 256 KB (the quality searched only where they cannot)")
        XCTAssertTrue(said["whatsapp"]?.hasSuffix("; the quality searched for the best that fits") ?? false, "\(said)")
        XCTAssertTrue(said["slack"]?.hasSuffix("; the quality searched for the best that fits") ?? false, "\(said)")
        XCTAssertTrue(said["line"]?.hasSuffix("; lossless, the colour levels searched (8 down to 4 bits a channel) until it fits") ?? false, "\(said)")
        XCTAssertTrue(said["discord"]?.hasSuffix("; APNG lossless, the colour levels searched (8 down to 4 bits a channel) until it fits; "
                                                 + "GIF the quality searched for the best that fits; the one closer to the frames is kept") ?? false, "\(said)")
        let core = try makeCore()
        core.perform(.openExportChooser)
        let rows = try XCTUnwrap(core.snapshot().chooserChoices)
        XCTAssertTrue(rows.contains { $0.hasPrefix("telegram ") && $0.hasSuffix("two passes at the bitrate that fills 256 KB (the quality searched only where they cannot)") }, "\(rows)")
        XCTAssertFalse(rows.contains { $0.hasPrefix("telegram ") && $0.contains("quality is searched") })
        core.finish()
    }

    /// `rename`: the name at once, with a typed name's checks.
    func testRenameAtOnceKeepsAGoodNameAndRefusesABadOne() throws {
        let core = try makeCore()
        core.perform(.selectNext(1))
        core.perform(.rename("tail"))
        XCTAssertEqual(core.snapshot().inspector?.name, "tail")
        XCTAssertFalse(core.inspector.isRenaming)
        core.perform(.rename("9lives"))
        XCTAssertTrue(core.messageIsError, core.message)
        XCTAssertTrue(core.message.hasPrefix("not renamed"), core.message)
        XCTAssertFalse(core.inspector.isRenaming)
        XCTAssertEqual(core.snapshot().inspector?.name, "tail")
    }

    func testTheCoreImportsNoWindowOrGraphics() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/WobbleStudioCore")
        let files = try FileManager.default.contentsOfDirectory(atPath: sources.path).filter { $0.hasSuffix(".swift") }
        XCTAssertTrue(files.contains("StudioCore.swift"))
        for f in files {
            let text = try String(contentsOf: sources.appendingPathComponent(f), encoding: .utf8)
            for line in text.split(separator: "\n") where line.hasPrefix("import ") || line.contains(" import ") {
                let module = line.split(separator: " ").last.map(String.init) ?? ""
                XCTAssertFalse(["CSDL2", "CEGL", "CGLES", "WobbleRender", "WobbleStudio"].contains(module), "\(f): \(line)")
            }
        }
    }
}
