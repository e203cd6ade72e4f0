import Foundation
import XCTest
import WobbleCore
import WobbleEngine
import WobbleMedia
import WobbleScript
import WobbleTestSupport
@testable import WobbleStudio
@testable import WobbleStudioCore
import WobbleSystem

private func key(_ k: StudioKey, shift: Bool = false, ctrl: Bool = false) -> StudioInput {
    .key(k, shift: shift, ctrl: ctrl)
}

/// Finishing a clip in the window, in-process: `L` (loop), a take of a
/// looping scene, `B` (bake), ticks deleted and moved, warnings shown.
final class StudioFinishTests: InProcessStudioCase {
    /// A starter-like scene: one region poked at 0, the clip ends when still.
    static let starter = """
    image("img.png")
    fps(10)
    local region = addSketch{x = 10, y = 10, w = 100, h = 70, duration = 0.6}
    prepare()
    touch(60, 45, 80, 45)
    untilStill()

    """

    /// One region with a baked poke at `time` (its `perform{...}` list),
    /// then `rest` after `prepare()`.
    static func baked(at time: String, then rest: String) -> String {
        """
        image("img.png")
        fps(10)
        local region = addSketch{x = 10, y = 10, w = 100, h = 70, duration = 0.6}
        perform{
          {\(time), touch = {60, 45, 80, 45}},
        }
        prepare()

        """ + rest
    }

    /// `--check --json` of a scene in the box.
    func checkJSON(_ scene: String) throws -> [String: Any] {
        let r = try Tool.run([scene, "--check", "--json"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    }

    /// `L` plays the loop at once; `Ctrl+S` writes `loop()` on its own line
    /// and the wait the `untilStill()` made (a loop never rests): the saved
    /// scene loops headless with the same frame count. `L`, `Ctrl+S` again
    /// takes the line out.
    func testLSwitchesTheLoopAndCtrlSWritesAndRemovesTheLine() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        try box.write("s.lua", StudioFinishTests.starter)
        let before = try checkJSON("s.lua")
        XCTAssertEqual(before["loop"] as? Bool, false)
        let frames = try XCTUnwrap(before["frames"] as? Int)
        let clock = ManualClock()
        let t0 = clock.t
        var looping: [Bool] = []
        var messages: [String] = []
        let (status, _, app) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.10, key(.l)),
            (t0 + 0.30, key(.s, ctrl: true)),
            (t0 + 0.50, key(.l)),
            (t0 + 0.70, key(.s, ctrl: true)),
            (t0 + 0.90, key(.escape)),
        ]) { surface, app in
            surface.actions = [
                (t0 + 0.05, { looping.append(app.session.clip?.loop != nil) }),
                (t0 + 0.20, { looping.append(app.session.clip?.loop != nil); messages.append(app.message) }),
                (t0 + 0.40, {
                    looping.append(app.session.clip?.loop != nil)
                    messages.append(app.message)
                    try? self.box.write("saved-loop.lua", (try? self.read("s.lua")) ?? "")
                }),
                (t0 + 0.60, { looping.append(app.session.clip?.loop != nil); messages.append(app.message) }),
                (t0 + 0.80, { messages.append(app.message) }),
            ]
        }
        XCTAssertEqual(status, 0)
        XCTAssertEqual(looping, [false, true, true, false], "the preview plays the loop at once, and stops it")
        XCTAssertEqual(messages, [
            "loop on: the clip plays as an endless loop (Ctrl+S writes loop() into the scene)",
            "saved s.lua: loop() written",
            "loop off (Ctrl+S takes loop() out of the scene)",
            "saved s.lua: loop() taken out"])
        let saved = try read("saved-loop.lua")
        let untilStillWait = try XCTUnwrap(saved.split(separator: "\n").last.map(String.init))
        XCTAssertTrue(untilStillWait.hasPrefix("wait("), saved)
        XCTAssertEqual(saved, StudioFinishTests.starter
            .replacingOccurrences(of: "prepare()\n", with: "loop()\nprepare()\n")
            .replacingOccurrences(of: "untilStill()", with: untilStillWait))
        let looped = try checkJSON("saved-loop.lua")
        XCTAssertEqual(looped["loop"] as? Bool, true)
        XCTAssertEqual(looped["frames"] as? Int, frames, "the loop's period is the clip as it was")
        // Off again: only the line goes.
        XCTAssertEqual(try read("s.lua"), saved.replacingOccurrences(of: "loop()\n", with: ""))
        XCTAssertEqual(try checkJSON("s.lua")["loop"] as? Bool, false)
        XCTAssertFalse(app.session.hasUnsavedEdits)
    }

    /// `L` on a clip that goes on past the script's end (a baked poke at
    /// 5 s after a scripted part that rests at 4.2 s, or ends with
    /// `wait(0.5)`): the loop is the 9.2 s clip being watched, not the
    /// 5 s up to the last baked event (an artist's 7.3 s clip became a
    /// 1.73 s loop). The preview, the saved scene and `--check --json` agree.
    func testLLoopsTheClipBeingWatched() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        let ends = [
            // The scripted part ends with untilStill(): it waits up to the period's end.
            ("untilStill()\n", { (_: String) in "wait(9.2)\n" }),
            // It ends with a wait: a wait up to the period's end follows it.
            ("wait(0.5)\n", { (end: String) in end + "wait(8.7)\n" }),
        ]
        for (end, written) in ends {
            let text = StudioFinishTests.baked(at: "5", then: "touch(60, 45, 80, 45)\n" + end)
            try box.write("s.lua", text)
            let before = try checkJSON("s.lua")
            XCTAssertEqual(before["frames"] as? Int, 92, "the baked poke's motion goes on to 9.2 s")
            XCTAssertEqual(before["duration"] as? Double, 9.2)
            let clock = ManualClock()
            let t0 = clock.t
            var previewFrames: [Int] = []
            var periods: [Double?] = []
            let (status, _, _) = try runStudio("s.lua", clock: clock, script: [
                (t0 + 0.10, key(.l)),
                (t0 + 0.30, key(.s, ctrl: true)),
                (t0 + 0.50, key(.escape)),
            ]) { surface, app in
                surface.actions = [
                    (t0 + 0.20, {
                        previewFrames.append(app.session.clip?.frameCount ?? 0)
                        periods.append(app.core.loopPeriod)
                    }),
                    (t0 + 0.40, {
                        previewFrames.append(app.session.clip?.frameCount ?? 0)
                        periods.append(app.core.loopPeriod)
                    }),
                ]
            }
            XCTAssertEqual(status, 0)
            XCTAssertEqual(previewFrames, [92, 92], "the loop plays the clip that was watched, before and after Ctrl+S")
            XCTAssertEqual(periods.map { $0.map { ($0 * 1000).rounded() } }, [9200, 9200])
            XCTAssertEqual(try read("s.lua"), text.replacingOccurrences(of: "prepare()\n", with: "loop()\nprepare()\n")
                .replacingOccurrences(of: end, with: written(end)))
            let looped = try checkJSON("s.lua")
            XCTAssertEqual(looped["loop"] as? Bool, true)
            XCTAssertEqual(looped["frames"] as? Int, 92)
            XCTAssertEqual(looped["duration"] as? Double, 9.2)
        }
    }

    /// `L`, `Ctrl+S`, then `Ctrl+Z`: the saved loop() line is a wall (an
    /// artist's undo past such a save left edits for lines the file no
    /// longer had, and every later save was refused).
    func testUndoStopsAtASaveThatWroteTheScenesOwnEdits() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        try box.write("s.lua", StudioFinishTests.starter)
        let clock = ManualClock()
        let t0 = clock.t
        var messages: [String] = []
        var saved = ""
        let (status, _, app) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.10, key(.l)),
            (t0 + 0.30, key(.s, ctrl: true)),
            (t0 + 0.50, key(.z, ctrl: true)),
            (t0 + 0.70, key(.s, ctrl: true)),
            (t0 + 0.90, key(.escape)),
        ]) { surface, app in
            surface.actions = [
                (t0 + 0.40, { saved = (try? self.read("s.lua")) ?? "" }),
                (t0 + 0.60, { messages.append(app.message) }),
                (t0 + 0.80, { messages.append(app.message) }),
            ]
        }
        XCTAssertEqual(status, 0)
        XCTAssertTrue(saved.contains("loop()\n"), saved)
        XCTAssertEqual(messages, [
            "undo stops at the save that wrote the loop, the baked events or the deleted kicks: L, B and the timeline change them again",
            "nothing to save"])
        XCTAssertEqual(try read("s.lua"), saved, "the file stays as saved")
        XCTAssertFalse(app.session.hasUnsavedEdits)
    }

    /// `L` then `Ctrl+Z`: the loop goes again, nothing to save.
    func testLIsOneUndoStep() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        try box.write("s.lua", StudioFinishTests.starter)
        let clock = ManualClock()
        let t0 = clock.t
        var looping: [Bool] = []
        let (status, _, app) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.10, key(.l)),
            (t0 + 0.30, key(.z, ctrl: true)),
            (t0 + 0.50, key(.escape)),
        ]) { surface, app in
            surface.actions = [
                (t0 + 0.20, { looping.append(app.session.clip?.loop != nil) }),
                (t0 + 0.40, { looping.append(app.session.clip?.loop != nil) }),
            ]
        }
        XCTAssertEqual(status, 0)
        XCTAssertEqual(looping, [true, false])
        XCTAssertFalse(app.session.hasUnsavedEdits)
        XCTAssertEqual(try read("s.lua"), StudioFinishTests.starter)
    }

    /// A take of a looping scene ends on a whole number of periods and
    /// renders: its frame count is a multiple of the scene's, and it loops.
    func testATakeOfALoopingSceneEndsOnWholePeriods() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        let text = StudioFinishTests.starter.replacingOccurrences(of: "prepare()\n", with: "loop()\nprepare()\n")
            .replacingOccurrences(of: "untilStill()", with: "wait(1.2)")
        try box.write("s.lua", text)
        let period = try XCTUnwrap(try checkJSON("s.lua")["frames"] as? Int)
        XCTAssertEqual(period, 12)
        let area = Layout(imageWidth: 120, imageHeight: 90, screen: (1920, 1080)).imageRect
        let clock = ManualClock()
        let t0 = clock.t
        let (status, _, _) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.1, key(.r)),
            (t0 + 0.35, .mouseDown(x: area.x + 35, y: area.y + 30)),
            (t0 + 0.4, .mouseUp(x: area.x + 45, y: area.y + 40)),
            (t0 + 2.0, key(.r)),
            (t0 + 2.1, .quit),
        ])
        XCTAssertEqual(status, 0)
        let take = try read("s-take-1.lua")
        XCTAssertTrue(take.hasPrefix(text))
        XCTAssertFalse(take.contains("untilStill"), take)
        let json = try checkJSON("s-take-1.lua")
        XCTAssertEqual(json["loop"] as? Bool, true)
        // 1.2 s of script and about 2 s recorded: whole periods, three at least.
        let frames = try XCTUnwrap(json["frames"] as? Int)
        XCTAssertEqual(frames % period, 0, take)
        XCTAssertGreaterThanOrEqual(frames, 3 * period, take)
        let r = try Tool.run(["s-take-1.lua", "-q", "-o", "take.gif"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
    }

    /// Where a looping take ends: whole periods (two at least) covering
    /// what was recorded, a quarter frame before the last period's end.
    func testTheLoopingTakeEndIsWholePeriods() {
        let loop = Take.Loop(scriptEnd: 1.2, period: 1.2, fps: 10)
        XCTAssertEqual(loop.end(recorded: 1.9, lastEvent: 0.3), 3 * 1.2 - 0.025 - 1.2, accuracy: 1e-12)
        XCTAssertEqual(loop.end(recorded: 0.1, lastEvent: 0.1), 2 * 1.2 - 0.025 - 1.2, accuracy: 1e-12)
        XCTAssertEqual(loop.end(recorded: 1.2, lastEvent: 0), 2 * 1.2 - 0.025 - 1.2, accuracy: 1e-12, "exactly two periods")
        XCTAssertEqual(loop.end(recorded: 1.2001, lastEvent: 0), 3 * 1.2 - 0.025 - 1.2, accuracy: 1e-12)
    }

    /// The scene's warnings show in the window while they hold: a region
    /// dragged away from the scene's touch says the touch hits nothing and
    /// nothing moves, in the warning colour; dragged back, they go.
    func testWarningsShowWhileTheyHoldAndGo() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        let text = StudioFinishTests.starter.replacingOccurrences(of: "x = 10, y = 10, w = 100, h = 70", with: "x = 40, y = 30, w = 50, h = 40")
        try box.write("s.lua", text)
        let a = imageArea(120, 90)
        let clock = ManualClock()
        let t0 = clock.t
        var rows: [[(text: String, kind: Chrome.RowKind)]] = []
        var help = ""
        let (status, _, _) = try runStudio("s.lua", clock: clock, script: [
            // The center handle (65, 50) dragged far from the touch at (60, 45)..
            (t0 + 0.10, .mouseDown(x: a.x + 65, y: a.y + 50)),
            (t0 + 0.15, .mouseMove(x: a.x + 90, y: a.y + 75)),
            (t0 + 0.20, .mouseUp(x: a.x + 110, y: a.y + 85)),
            (t0 + 0.50, key(.z, ctrl: true)),
            (t0 + 0.80, key(.escape)),
        ]) { surface, app in
            surface.actions = [
                (t0 + 0.05, { rows.append(app.chromeRows) }),
                (t0 + 0.40, { rows.append(app.chromeRows); help = app.helpMessage }),
                (t0 + 0.70, { rows.append(app.chromeRows) }),
            ]
        }
        XCTAssertEqual(status, 0)
        XCTAssertEqual(rows.count, 3)
        XCTAssertFalse(rows[0].contains { $0.kind == .warning }, "\(rows[0])")
        let warned = rows[1].filter { $0.kind == .warning }.map(\.text)
        XCTAssertEqual(warned.count, 1, "one row: \(rows[1])")
        XCTAssertTrue(warned[0].hasPrefix("warning:"), warned[0])
        // F1 shows each whole, with its line.
        XCTAssertTrue(help.contains("warning: \(box.path("s.lua")):5: touch at (60, 45) hits nothing"), help)
        XCTAssertTrue(help.contains("warning: nothing moves in the clip's 1 frame"), help)
        XCTAssertFalse(rows[2].contains { $0.kind == .warning }, "undone: the warnings went: \(rows[2])")
    }

    /// Quitting during an export stops it cleanly (SIGTERM: the tool
    /// removes what it was writing): nothing is left beside the scene.
    func testQuittingDuringAnExportLeavesNoFile() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 600, height: 400))
        try box.write("s.lua", """
        image("img.png")
        fps(30)
        local r = addSketch{x = 50, y = 50, w = 500, h = 300, duration = 30, motion = "spring", damping = 0.01}
        prepare()
        impulse(r, 1, 0.5)
        wait(20)

        """)
        let clock = ManualClock()
        let t0 = clock.t
        var exporting = false
        let (status, _, _) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.05, key(.e)),
            (t0 + 0.2, key(.escape)),
        ]) { surface, app in
            surface.actions = [(t0 + 0.1, {
                // Until the tool has started writing beside the scene.
                surface.holdWhile = {
                    let names = (try? FileManager.default.contentsOfDirectory(atPath: self.box.url.path)) ?? []
                    return app.isExporting && !names.contains { $0.hasPrefix(".") }
                }
                exporting = true
            })]
        }
        XCTAssertEqual(status, 0)
        XCTAssertTrue(exporting)
        let left = try FileManager.default.contentsOfDirectory(atPath: box.url.path).sorted()
        XCTAssertEqual(left, ["img.png", "s.lua"], "nothing left beside the scene")
    }

    /// An export whose render warned is not shown as a success.
    func testAnExportThatWarnedIsNotShownAsASuccess() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        try box.write("s.lua", StudioFinishTests.starter.replacingOccurrences(of: "touch(60, 45, 80, 45)", with: "touch(115, 85, 118, 88)"))
        let clock = ManualClock()
        let t0 = clock.t
        let (status, _, app) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.05, key(.e)),
            (t0 + 0.5, key(.escape)),
        ]) { surface, app in
            surface.actions = [(t0 + 0.06, { surface.holdWhile = { app.isExporting } })]
        }
        XCTAssertEqual(status, 0)
        XCTAssertTrue(app.message.hasPrefix("exported in "), app.message)
        XCTAssertTrue(app.message.contains(", but warning: "), app.message)
        XCTAssertTrue(app.messageIsError, "a warning is not a success")
        XCTAssertTrue(FileManager.default.fileExists(atPath: box.path("s.gif")))
    }

    /// Where time `t` is on the timeline of a 120×90 scene's window.
    func timelineX(_ t: Double, length: Double) -> (x: Int, y: Int) {
        let l = Layout(imageWidth: 120, imageHeight: 90, screen: (1920, 1080))
        return (Chrome.x(t, width: l.windowWidth, length: length), l.chromeY + 10)
    }

    /// `R`, a poke, `R`, `B`, `Ctrl+S`: the poke is in the scene at its time
    /// in the clip, and the saved scene renders frame for frame what the
    /// take performed after its scripted part.
    func testBBakesTheTakeIntoTheSceneAndItRendersThePerformance() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        let text = """
        image("img.png")
        fps(10)
        local region = addSketch{x = 10, y = 10, w = 100, h = 70, duration = 0.6}
        prepare()
        wait(0.5)

        """
        try box.write("s.lua", text)
        let area = imageArea(120, 90)
        let clock = ManualClock()
        let t0 = clock.t
        var messages: [String] = []
        let (status, _, app) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.1, key(.r)),
            (t0 + 0.35, .mouseDown(x: area.x + 35, y: area.y + 30)),
            (t0 + 0.4, .mouseUp(x: area.x + 45, y: area.y + 40)),
            (t0 + 0.9, key(.r)),
            (t0 + 1.0, key(.b)),
            (t0 + 1.2, key(.s, ctrl: true)),
            (t0 + 1.4, key(.escape)),
        ]) { surface, app in
            surface.actions = [
                (t0 + 1.1, { messages.append(app.message) }),
                (t0 + 1.3, { messages.append(app.message) }),
            ]
        }
        XCTAssertEqual(status, 0)
        let take = try read("s-take-1.lua")
        let block = try XCTUnwrap(take.components(separatedBy: "after the scripted clip, to the millisecond.\n").last)
        let ms = try XCTUnwrap(block.split(separator: "\n").first { $0.hasPrefix("wait(") }.map { String($0.dropFirst(5).dropLast()) })
        XCTAssertEqual(messages.first, "baked 1 poke and shake into the clip at \(String(format: "%.3f", Double(ms) ?? -1))–\(String(format: "%.3f", Double(ms) ?? -1)) s (Ctrl+S writes them into the scene)")
        XCTAssertEqual(messages.last, "saved s.lua: 1 baked event")
        let saved = try read("s.lua")
        XCTAssertEqual(saved, text.replacingOccurrences(of: "prepare()\n", with: """
        -- Pokes and shakes baked from a take in `wobble-run edit` (B), at their
        -- times in the clip (seconds): edit, move or delete them freely.
        perform{
          {\(ms), touch = {35.5, 30.5, 45.5, 40.5}},
        }
        prepare()

        """))
        XCTAssertFalse(app.session.hasUnsavedEdits)
        // The take's performed part (from its scripted end, frame 5) is the
        // baked scene's clip, frame for frame.
        let takeJSON = try checkJSON("s-take-1.lua"), bakedJSON = try checkJSON("s.lua")
        let takeFrames = try XCTUnwrap(takeJSON["frames"] as? Int), bakedFrames = try XCTUnwrap(bakedJSON["frames"] as? Int)
        XCTAssertEqual(takeFrames - 5, bakedFrames)
        let performed = try headlessFrames("s-take-1.lua", count: takeFrames, folder: "take")
        let baked = try headlessFrames("s.lua", count: bakedFrames, folder: "baked")
        XCTAssertEqual(Array(performed[5...]), baked)
        XCTAssertNotEqual(baked[0], baked[Int((Double(ms) ?? 0) * 10) + 2], "the poke moves the region")
    }

    /// A scripted touch is selected by its tick and deleted (`Delete`),
    /// then `Ctrl+S` takes its line out; a baked event is dragged along the
    /// timeline to another time, and `Delete` on it empties the list.
    func testTicksAreSelectedDeletedAndMoved() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        let text = StudioFinishTests.baked(at: "0.2", then: "wait(0.5)\ntouch(60, 45, 40, 45)\nwait(1)\n")
        try box.write("s.lua", text)
        let clock = ManualClock()
        let t0 = clock.t
        var lengths: [Double] = []
        // The clip goes on until the baked poke's wobble rests.
        let length = Double(try XCTUnwrap(try checkJSON("s.lua")["frames"] as? Int)) / 10
        let scripted = timelineX(0.5, length: length), baked = timelineX(0.2, length: length), to = timelineX(0.7, length: length)
        let (status, _, app) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.10, .mouseDown(x: scripted.x, y: scripted.y)),
            (t0 + 0.12, .mouseUp(x: scripted.x, y: scripted.y)),
            (t0 + 0.15, key(.delete)),
            (t0 + 0.30, .mouseDown(x: baked.x, y: baked.y)),
            (t0 + 0.35, .mouseMove(x: (baked.x + to.x) / 2, y: baked.y)),
            (t0 + 0.40, .mouseUp(x: to.x, y: to.y)),
            (t0 + 0.60, key(.s, ctrl: true)),
            (t0 + 0.80, key(.escape)),
        ]) { surface, app in
            surface.actions = [(t0 + 0.05, { lengths.append(Double(app.session.clip?.frameCount ?? 0) / 10) })]
        }
        XCTAssertEqual(status, 0)
        XCTAssertEqual(lengths, [length])
        XCTAssertFalse(app.session.hasUnsavedEdits)
        let saved = try read("s.lua")
        XCTAssertEqual(saved, text.replacingOccurrences(of: "touch(60, 45, 40, 45)\n", with: "")
            .replacingOccurrences(of: "{0.2, touch", with: "{0.7, touch"))
    }

    /// Dragging the last baked tick later makes the clip longer at every
    /// step; the timeline keeps its scale until the release (it rescaled
    /// under the mouse, and the tick ran away from it), so the tick lands
    /// where the mouse lets it go, and the timeline then fits the new clip.
    func testTheTimelineKeepsItsScaleWhileATickIsDragged() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        let text = StudioFinishTests.baked(at: "1", then: "wait(0.5)\n")
        try box.write("s.lua", text)
        // The clip goes on while the baked poke's wobble does.
        let length = Double(try XCTUnwrap(try checkJSON("s.lua")["frames"] as? Int)) / 10
        let rest = length - 1
        let from = timelineX(1, length: length), mid = timelineX(2, length: length), to = timelineX(3, length: length)
        let clock = ManualClock()
        let t0 = clock.t
        var seen: [[Double]] = []
        func lengths(_ app: StudioApp) -> [Double] { [app.core.timelineLength, app.core.clipLength].map { ($0 * 10).rounded() / 10 } }
        let (status, _, _) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.10, .mouseDown(x: from.x, y: from.y)),
            (t0 + 0.20, .mouseMove(x: mid.x, y: mid.y)),
            (t0 + 0.30, .mouseMove(x: to.x, y: to.y)),
            (t0 + 0.40, .mouseUp(x: to.x, y: to.y)),
            (t0 + 0.60, key(.s, ctrl: true)),
            (t0 + 0.80, key(.escape)),
        ]) { surface, app in
            surface.actions = [
                (t0 + 0.05, { seen.append(lengths(app)) }),
                (t0 + 0.25, { seen.append(lengths(app)) }),
                (t0 + 0.35, { seen.append(lengths(app)) }),
                (t0 + 0.50, { seen.append(lengths(app)) }),
            ]
        }
        XCTAssertEqual(status, 0)
        let r = { (t: Double) in (t * 10).rounded() / 10 }
        XCTAssertEqual(seen, [[length, length], [length, r(2 + rest)], [length, r(3 + rest)], [r(3 + rest), r(3 + rest)]],
                       "held during the drag, the clip's own after it")
        XCTAssertEqual(try read("s.lua"), text.replacingOccurrences(of: "{1, touch", with: "{3, touch"))
    }
}
