import Foundation
import XCTest
import WobbleCore
import WobbleMedia
import WobbleScript
@testable import WobbleEngine

/// The live session: performed events on top of a scene, takes.
final class LiveSessionTests: SessionTestCase {
    static let still = """
    image("img.png")
    addSketch{x = 8, y = 6, w = 24, h = 18}
    prepare()
    wait(0.5)
    """

    func testTouchAtATimeMovesTheRegionFromThen() throws {
        let s = LiveSession(options: SessionOptions(scenePath: try scene(LiveSessionTests.still)))
        XCTAssertTrue(s.run())
        XCTAssertEqual(s.clip?.frameCount, 15)
        XCTAssertTrue(s.frameState(10)?.regions.isEmpty ?? false)
        XCTAssertTrue(s.performing([PerformedEvent(time: 0.2, action: .touch(from: Point(20, 15), to: Point(25, 15)))]))
        XCTAssertTrue(s.frameState(5)?.regions.isEmpty ?? false, "before the poke nothing moves")
        XCTAssertFalse(s.frameState(7)?.regions.isEmpty ?? true, "after it the region moves")
        // The clip goes on while the performed motion does (past 0.5 s).
        XCTAssertGreaterThan(s.clip?.frameCount ?? 0, 15)
        XCTAssertEqual(s.scriptedDuration, 0.5, accuracy: 1e-9)
        XCTAssertTrue(s.inputs.contains { $0.hasSuffix("img.png") })
    }

    static let nested = """
    image("img.png")
    addSketch{x = 2, y = 2, w = 36, h = 26}
    addSketch{x = 14, y = 10, w = 12, h = 10}
    prepare()
    wait(0.5)
    """

    /// A poke inside a region drawn inside another moves the inner one only,
    /// and the take written from it replays the same frames.
    func testAPokeInsideANestedRegionMovesTheInnerOneAndTheTakeAgrees() throws {
        let path = try scene(LiveSessionTests.nested)
        let s = LiveSession(options: SessionOptions(scenePath: path))
        XCTAssertTrue(s.run())
        let inner = RegionShape(lt: Point(14, 10), rt: Point(26, 10), rb: Point(26, 20), lb: Point(14, 20), center: Point(20, 15))
        var take = Take()
        take.events = [(200, .touch(from: Point(20, 15), to: Point(24, 15)))]
        XCTAssertTrue(s.performing(take.events.map { Take.performed(milliseconds: $0.milliseconds, action: $0.action) }))
        let moving = (0 ..< (s.clip?.frameCount ?? 0)).compactMap { s.frameState($0) }.filter { !$0.regions.isEmpty }
        XCTAssertFalse(moving.isEmpty, "the poke moves nothing")
        for f in moving {
            XCTAssertEqual(f.regions.map(\.shape), [inner], "frame \(f.index): only the inner region moves")
        }
        let written = try take.write(scenePath: path, recordedSeconds: 1, options: s.options)
        let replay = LiveSession(options: SessionOptions(scenePath: written))
        XCTAssertTrue(replay.run())
        XCTAssertEqual(replay.clip?.frameCount, s.clip?.frameCount)
        for k in 0 ..< (s.clip?.frameCount ?? 0) {
            XCTAssertEqual(replay.frameState(k), s.frameState(k), "frame \(k)")
        }
    }

    /// The studio plays what the session's clip says: a loop() scene's
    /// frames are its steady state (frame 0 already moves, from the kick of
    /// the period before), and a poke in it stays part of the loop.
    func testALoopingSceneIsPlayedAsItsLoop() throws {
        let path = try scene("""
        image("img.png")
        loop()
        addSketch{x = 8, y = 6, w = 24, h = 18, motion = "spring", duration = 0.4}
        prepare()
        wait(0.3)
        impulse(1, 1, 0)
        wait(0.3)
        """)
        let s = LiveSession(options: SessionOptions(scenePath: path))
        XCTAssertTrue(s.run())
        XCTAssertNotNil(s.clip?.loop)
        XCTAssertEqual(s.clip?.frameCount, 18)
        XCTAssertFalse(s.frameState(0)?.regions.isEmpty ?? true, "frame 0 shows the previous period's kick")
        XCTAssertEqual(s.clip?.frame(18).regions, s.frameState(0)?.regions, "the frame after the last is frame 0")
        XCTAssertTrue(s.performing([PerformedEvent(time: 0.1, action: .touch(from: Point(20, 15), to: Point(20, 20)))]))
        XCTAssertNotNil(s.clip?.loop)
        XCTAssertEqual(s.clip?.frameCount, 18, "a poke within the loop keeps its period")
        XCTAssertEqual(s.clip?.loop?.models.first?.motion.kicks.count, 2)
    }

    func testShakeWithoutEnableMotionAndAMiss() throws {
        let s = LiveSession(options: SessionOptions(scenePath: try scene(LiveSessionTests.still)))
        XCTAssertTrue(s.performing([PerformedEvent(time: 0.1, action: .touch(from: Point(1, 1), to: Point(5, 1)))]))
        XCTAssertTrue(s.frameState(10)?.regions.isEmpty ?? false, "a touch outside every region moves nothing")
        XCTAssertTrue(s.performing([PerformedEvent(time: 0.1, action: .shake(ax: 1.5, ay: 0))]))
        XCTAssertFalse(s.frameState(10)?.regions.isEmpty ?? true)
    }

    func testAFailingRunKeepsTheLastGoodClip() throws {
        let path = try scene(LiveSessionTests.still)
        let s = LiveSession(options: SessionOptions(scenePath: path))
        XCTAssertTrue(s.run())
        try "image('img.png')\nwait(0.1)\nerror('boom')\n".write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertFalse(s.run())
        XCTAssertTrue(s.error?.message.hasSuffix("scene.lua:3: boom") ?? false, s.error?.message ?? "")
        XCTAssertEqual(s.clip?.frameCount, 15)
        try "image('missing.png')\n".write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertFalse(s.run())
        XCTAssertTrue(s.error?.message.contains("missing.png") ?? false, s.error?.message ?? "")
    }

    func testATakeRendersWhatWasPerformed() throws {
        let path = try scene(LiveSessionTests.still)
        let s = LiveSession(options: SessionOptions(scenePath: path))
        XCTAssertTrue(s.run())
        var take = Take()
        take.events = [(250, Take.rounded(.touch(from: Point(20.04, 15), to: Point(26.26, 14)))),
                       (1250, .shake(ax: 0, ay: -1.5))]
        XCTAssertTrue(s.performing(take.events.map { Take.performed(milliseconds: $0.milliseconds, action: $0.action) }))
        let written = try take.write(scenePath: path, recordedSeconds: 2, options: s.options)
        XCTAssertTrue(written.hasSuffix("scene-take-1.lua"), written)
        let text = try String(contentsOfFile: written, encoding: .utf8)
        XCTAssertTrue(text.hasPrefix(LiveSessionTests.still + "\n"))
        XCTAssertTrue(text.contains("enableMotion()\nwait(0.25)\ntouch(20, 15, 26.3, 14)\nwait(1)\nshake(0, -1.5)\nuntilStill()\n"), text)
        // Rendering the take gives the session's frames, frame for frame.
        let replay = LiveSession(options: SessionOptions(scenePath: written))
        XCTAssertTrue(replay.run())
        XCTAssertEqual(replay.clip?.frameCount, s.clip?.frameCount)
        for k in 0..<(s.clip?.frameCount ?? 0) {
            XCTAssertEqual(replay.frameState(k), s.frameState(k), "frame \(k)")
        }
        XCTAssertTrue(Take.freePath(scenePath: path).hasSuffix("scene-take-2.lua"))
    }

    func testATakeThatCannotBeWrittenSaysWhyInOneLine() throws {
        // A scene name of 250 bytes: the take's name would be 257.
        let long = String(repeating: "a", count: 246) + ".lua"
        let path = try scene(LiveSessionTests.still)
        let target = (path as NSString).deletingLastPathComponent + "/" + long
        try FileManager.default.copyItem(atPath: path, toPath: target)
        var take = Take()
        take.events = [(100, .shake(ax: 1.5, ay: 0))]
        XCTAssertThrowsError(try take.write(scenePath: target, recordedSeconds: 1, options: SessionOptions(scenePath: target))) { error in
            let text = "\(error)"
            XCTAssertFalse(text.contains("\n"), text)
            XCTAssertTrue(text.contains("File name too long"), text)
            XCTAssertFalse(text.contains("does not run"), text)
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: (path as NSString).deletingLastPathComponent)
        XCTAssertFalse(left.contains { $0.contains("take") }, "\(left)")
    }

    func testATakeOfAModelThatNeverRestsGetsMaxSeconds() throws {
        let path = try scene("""
        image("img.png")
        addSketch{x = 8, y = 6, w = 24, h = 18, decay = 1}
        prepare()
        wait(0.2)
        """)
        var take = Take()
        take.events = [(100, .touch(from: Point(20, 15), to: Point(25, 15)))]
        let written = try take.write(scenePath: path, recordedSeconds: 3, options: SessionOptions(scenePath: path))
        let text = try String(contentsOfFile: written, encoding: .utf8)
        XCTAssertTrue(text.hasSuffix("untilStill(2.9)\n"), text)
    }
}
