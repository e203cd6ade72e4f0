import XCTest
import WobbleCore
@testable import WobbleScript

/// `perform{...}`: pokes and shakes at clip times (a baked take).
final class PerformTests: XCTestCase {
    func message(_ source: String) -> String {
        do {
            _ = try SceneFixture().run(withImage + source)
            return "ran"
        } catch let e as ScriptError {
            return String(e.message.split(separator: "\n").first ?? "")
        } catch {
            return "\(error)"
        }
    }

    /// Events at their times: the touch hits the region then, the shake
    /// moves it then; the clip goes on after the script until they played.
    func testEventsHappenAtTheirTimesAndExtendTheClip() throws {
        let r = try SceneFixture().run(withImage + """
        local r = addSketch{x = 10, y = 10, w = 50, h = 50}
        perform{
          {0.25, touch = {20, 20, 30, 20}},
          {1.5, shake = {1.5, 0}},
        }
        prepare()
        wait(0.5)
        """)
        XCTAssertEqual(r.scenePerformed, [
            PerformedEvent(time: 0.25, action: .touch(from: Point(20, 20), to: Point(30, 20))),
            PerformedEvent(time: 1.5, action: .shake(ax: 1.5, ay: 0))])
        // Still before 0.25 s, moving after; the shake at 1.5 s is past the script's end.
        XCTAssertTrue(r.clip.frame(Int(0.2 * r.clip.fps)).regions.isEmpty)
        XCTAssertFalse(r.clip.frame(Int(0.4 * r.clip.fps)).regions.isEmpty)
        XCTAssertGreaterThan(r.clip.duration, 1.5)
    }

    func testBadArgumentsAreOneLineNamingTheEntry() {
        let at = "/scene.lua"
        XCTAssertTrue(message("perform(3)").hasSuffix("bad argument #1 to 'perform' (table expected, got number)"), message("perform(3)"))
        XCTAssertTrue(message("perform{{0.1, touch = {1, 2, 3}}}").hasSuffix("\(at):2: perform: entry 1: touch must be 4 numbers"),
                      message("perform{{0.1, touch = {1, 2, 3}}}"))
        XCTAssertTrue(message("perform{{-1, shake = {1, 0}}}").hasSuffix("perform: entry 1: its first value must be the time in seconds (a finite number >= 0)"))
        XCTAssertTrue(message("perform{{1, shake = {1, 0}, touch = {1, 2, 3, 4}}}").hasSuffix("perform: entry 1: give touch = {x0, y0, x1, y1} or shake = {ax, ay} (one of them)"))
        XCTAssertTrue(message("perform{{1, jiggle = 1}}").hasSuffix("perform: entry 1: unknown key 'jiggle' (valid: [1] the time, touch, shake)"))
        XCTAssertTrue(message("perform{x = 1}").hasSuffix("perform: unknown key 'x' (a list of {t, touch = {x0, y0, x1, y1}} or {t, shake = {ax, ay}})"))
        XCTAssertTrue(message("perform{7}").hasSuffix("perform: entry 1 must be a table {t, touch = {...}} or {t, shake = {...}}, got number"))
        XCTAssertTrue(message("wait(1)\nperform{{0.5, shake = {1, 0}}}").hasSuffix("perform: an event at 0.5 s is before now (1 s): call perform{...} before the clock passes its events"))
        XCTAssertEqual(message("perform{}"), "ran")
    }
}
