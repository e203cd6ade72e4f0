import Foundation
import XCTest
import WobbleCore
import WobbleEngine
import WobbleMedia
import WobbleScript
import WobbleTestSupport
@testable import WobbleStudio

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
}
