import Foundation
import XCTest
import WobbleCore
@testable import WobbleStudio
@testable import WobbleStudioCore
#if canImport(Glibc)
import Glibc
import WobbleSystem
#endif

/// A run of the scene that fails after an edit says so, in the window and
/// on stderr: a drag whose re-run fails does not say "moved", and a run
/// after Ctrl+S that fails is on stderr as well as in the window.
final class StudioRunFailureTests: InProcessStudioCase {
    /// What the studio writes on stderr (descriptor 2) while `body` runs.
    private func capturingStderr<T>(_ body: () throws -> T) throws -> (T, String) {
        let path = box.path("stderr.txt")
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0)
        let saved = dup(2)
        dup2(fd, 2)
        close(fd)
        defer {
            dup2(saved, 2)
            close(saved)
        }
        let value = try body()
        return (value, try String(contentsOfFile: path, encoding: .utf8))
    }

    /// A scene that fails once its sketch's `lt` is dragged right of x = 15.
    private func failingScene() throws -> String {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        let text = """
        image("img.png")
        local s = addSketch{lt = {10, 10}, rt = {110, 10}, rb = {110, 80}, lb = {10, 80}}
        if s.lt.x > 15 then error("lt is too far right") end
        prepare()
        wait(0.5)

        """
        try box.write("s.lua", text)
        return text
    }

    func testADragWhoseRunFailsSaysTheRunFailedNotMoved() throws {
        let text = try failingScene()
        nonisolated(unsafe) var said: (message: String, isError: Bool)?
        let a = imageArea(120, 90)
        let clock = ManualClock()
        let t0 = clock.t
        let ((status, _, app), stderr) = try capturingStderr {
            try runStudio("s.lua", clock: clock, script: [
                (t0 + 0.10, .mouseDown(x: a.x + 10, y: a.y + 10)),   // lt
                (t0 + 0.15, .mouseMove(x: a.x + 20, y: a.y + 15)),   // the scene fails there
                (t0 + 0.20, .mouseUp(x: a.x + 20, y: a.y + 15)),
                // The drag is an unsaved edit: the first close asks, the second quits.
                (t0 + 0.40, .quit),
                (t0 + 0.45, .quit),
            ]) { surface, app in
                surface.actions = [(t0 + 0.35, { said = (app.message, app.messageIsError) })]
            }
        }
        XCTAssertEqual(status, 0)
        let error = box.path("s.lua") + ":3: lt is too far right"
        XCTAssertEqual(said?.message, "the scene failed with lt at (20, 15) of the sketch of line 2: \(error); Ctrl+Z undoes")
        XCTAssertEqual(said?.isError, true)
        XCTAssertTrue(app.message.hasPrefix("1 unsaved edit (s): close again quits without saving"), app.message)
        // On stderr once (the drag ran the scene once with lt there).
        XCTAssertEqual(stderr.components(separatedBy: error + "\n").count - 1, 1, stderr)
        XCTAssertEqual(try read("s.lua"), text)
    }

    func testARunThatFailsAfterCtrlSIsInTheWindowAndOnStderr() throws {
        let text = try failingScene()
        let a = imageArea(120, 90)
        let clock = ManualClock()
        let t0 = clock.t
        var afterDrag = ""
        let ((status, _, app), stderr) = try capturingStderr {
            try runStudio("s.lua", clock: clock, script: [
                (t0 + 0.10, .mouseDown(x: a.x + 10, y: a.y + 10)),
                (t0 + 0.15, .mouseMove(x: a.x + 20, y: a.y + 15)),
                (t0 + 0.20, .mouseUp(x: a.x + 20, y: a.y + 15)),
                (t0 + 0.40, .key(.s, shift: false, ctrl: true)),    // saved, then the saved scene fails
                (t0 + 0.80, .quit),
            ]) { surface, app in
                surface.actions = [(t0 + 0.3, { afterDrag = self.stderrSoFar() })]
            }
        }
        XCTAssertEqual(status, 0)
        let error = box.path("s.lua") + ":3: lt is too far right"
        XCTAssertEqual(try read("s.lua"), text.replacingOccurrences(of: "lt = {10, 10}", with: "lt = {20, 15}"))
        XCTAssertEqual(app.message, "\(error) (playing the last good run)")
        XCTAssertTrue(app.messageIsError)
        // The saved scene's failure is on stderr after the save's line.
        let saved = try XCTUnwrap(stderr.range(of: "studio: saved "), stderr)
        XCTAssertTrue(stderr[saved.upperBound...].contains(error + "\n"), stderr)
        XCTAssertTrue(afterDrag.contains(error + "\n"), afterDrag)
    }

    /// A scene that fails on disk: its error stays in the status rows,
    /// wrapped, while other messages come after it (H's), until the scene
    /// runs again; the help sheet has it whole.
    func testASceneErrorStaysShownUntilTheSceneRunsAgain() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        // (A clip that moves and rests: no warning shares the rows.)
        let good = "image('img.png')\nlocal r = addSketch{x = 10, y = 10, w = 100, h = 70}\nprepare() impulse(r, 1, 0)\nuntilStill()\n"
        let long = String(repeating: "a long reason ", count: 6) + "at the end"
        try box.write("s.lua", good)
        let clock = ManualClock()
        let t0 = clock.t
        var during: [String] = [], after: [String] = []
        var errorDuring: String?, helpDuring = ""
        let ((status, _, app), _) = try capturingStderr {
            try runStudio("s.lua", clock: clock, script: [
                (t0 + 0.30, .key(.h, shift: false, ctrl: false)),
                (t0 + 0.60, .quit),
            ]) { surface, app in
                surface.actions = [
                    (t0 + 0.10, {
                        try? self.box.write("s.lua", good + "error('\(long)')\n")
                        surface.holdWhile = { !app.messageIsError }
                    }),
                    (t0 + 0.35, { during = app.statusRows; errorDuring = app.sceneError; helpDuring = app.helpMessage }),
                    (t0 + 0.40, {
                        try? self.box.write("s.lua", good)
                        surface.holdWhile = { app.sceneError != nil }
                    }),
                    (t0 + 0.50, { after = app.statusRows }),
                ]
            }
        }
        XCTAssertEqual(status, 0)
        let error = try XCTUnwrap(errorDuring)
        XCTAssertTrue(error.hasSuffix("s.lua:5: \(long) (playing the last good run)"), error)
        XCTAssertEqual(during.count, 3, "\(during)")
        XCTAssertEqual(during.last, "handles hidden", "the other message comes after the error")
        XCTAssertTrue(during[0].hasPrefix(String(error.prefix(20))), "\(during)")
        XCTAssertTrue(during[1].hasSuffix("... (F1 shows it all)"), "\(during)")
        let columns = (Layout(imageWidth: 120, imageHeight: 90, screen: (1920, 1080)).windowWidth - 16) / 7
        XCTAssertTrue(during.allSatisfy { $0.count <= columns }, "\(during)")
        XCTAssertEqual(helpDuring, error + "\nhandles hidden", "the help sheet has the error whole")
        XCTAssertEqual(after, ["reloaded: s.lua changed"], "the error goes when the scene runs again")
        XCTAssertNil(app.sceneError)
    }

    /// stderr.txt as written so far.
    private func stderrSoFar() -> String {
        (try? String(contentsOfFile: box.path("stderr.txt"), encoding: .utf8)) ?? ""
    }
}
