import Foundation
import XCTest
import WobbleCore
import WobbleEngine
import WobbleMedia
@testable import WobbleStudio
@testable import WobbleStudioCore
import WobbleSystem

private func key(_ k: StudioKey, shift: Bool = false, ctrl: Bool = false) -> StudioInput {
    .key(k, shift: shift, ctrl: ctrl)
}

/// The studio's keys and mouse on the timeline and the sketches,
/// in-process: every picture checked against a headless render, every
/// save against the file on disk.
final class StudioInProcessEditTests: InProcessStudioCase {
    /// A click on the timeline seeks (and pauses), a drag along it follows
    /// the mouse, the release leaves the playhead there; Space plays on.
    func testScrubbingTheTimelineSeeksAndPauses() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 40, height: 30))
        try box.write("s.lua", """
        image("img.png")
        fps(10)
        addSketch{x = 6, y = 5, w = 28, h = 20, duration = 5}
        prepare()
        impulse(1, 1, 0.3)
        wait(1.2)
        """)
        let expected = try headlessFrames("s.lua", count: 12)
        let layout = Layout(imageWidth: 40, imageHeight: 30, screen: (1920, 1080))
        // The timeline's x for a fraction of the clip (12 frames of 0.1 s).
        func x(_ f: Double) -> Int { Layout.timelinePad + Int((f * Double(layout.windowWidth - 2 * Layout.timelinePad)).rounded(.up)) }
        let y = layout.chromeY + 10
        let clock = ManualClock()
        let t0 = clock.t
        let (status, surface, _) = try runStudio("s.lua", clock: clock, script: [
            (t0, key(.h)),
            (t0 + 0.25, .mouseDown(x: x(0.25), y: y)),   // frame 3
            (t0 + 0.35, .mouseMove(x: x(0.5), y: y)),    // frame 6
            (t0 + 0.45, .mouseUp(x: x(0.7), y: y)),      // frame 8
            (t0 + 0.95, key(.space)),                    // plays on: 9 at +0.1 s
            (t0 + 1.08, .quit),
        ])
        XCTAssertEqual(status, 0)
        let shown: [(at: Double, k: Int?)] = surface.frames.compactMap { f in
            f.image.map { (f.at - t0, expected.firstIndex(of: $0)) }
        }
        XCTAssertTrue(shown.allSatisfy { $0.k != nil }, "every picture shown is a headless frame: \(shown.map(\.k))")
        var sequence: [Int] = []
        for s in shown where s.k != sequence.last { sequence.append(s.k ?? -1) }
        XCTAssertEqual(sequence, [0, 1, 2, 3, 6, 8, 9], "\(shown.map { ($0.at, $0.k ?? -1) })")
        XCTAssertEqual(shown.first { $0.k == 3 }?.at ?? -1, 0.25, accuracy: 1e-9, "the click seeks at once")
        XCTAssertFalse(shown.contains { $0.at > 0.45 && $0.at < 0.95 && $0.k != 8 }, "paused after the release")
        XCTAssertEqual(shown.first { $0.k == 9 }?.at ?? -1, 1.05, accuracy: 0.011, "Space plays on from frame 8")
    }

    /// A handle dragged: the preview is the headless render of the scene
    /// with that corner's new numbers; Ctrl+Z gives back the original
    /// frame; nothing is written without Ctrl+S.
    func testAHandleDragChangesThePreviewAndUndoRestoresIt() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        let text = """
        image("img.png")
        addSketch{lt = {10, 10}, rt = {110, 10}, rb = {110, 80}, lb = {10, 80}}
        prepare()
        impulse(1, 1, 0.5)
        wait(0.5)

        """
        try box.write("s.lua", text)
        try box.write("edited.lua", text.replacingOccurrences(of: "lt = {10, 10}", with: "lt = {20, 15}"))
        let original = try headlessFrames("s.lua", count: 4)
        let edited = try headlessFrames("edited.lua", count: 4, folder: "edited")
        XCTAssertNotEqual(original[3], edited[3])
        let a = imageArea(120, 90)
        let clock = ManualClock()
        let t0 = clock.t
        let (status, surface, app) = try runStudio("s.lua", clock: clock, script: [
            (t0, key(.space)),
            (t0 + 0.1, key(.right)), (t0 + 0.15, key(.right)), (t0 + 0.2, key(.right)),   // frame 3
            (t0 + 0.4, .mouseDown(x: a.x + 10, y: a.y + 10)),                            // lt
            (t0 + 0.45, .mouseMove(x: a.x + 15, y: a.y + 12)),
            (t0 + 0.5, .mouseUp(x: a.x + 20, y: a.y + 15)),
            (t0 + 0.6, key(.h)),
            (t0 + 0.8, key(.z, ctrl: true)),
            (t0 + 1.0, .quit),
        ])
        XCTAssertEqual(status, 0)
        let before = try XCTUnwrap(surface.picture(before: t0 + 0.4))
        let dragging = try XCTUnwrap(surface.picture(before: t0 + 0.5))
        XCTAssertGreaterThan(agreement(before, dragging, tolerance: 0).differing, 100, "the preview follows the drag")
        XCTAssertEqual(surface.picture(before: t0 + 0.8), edited[3], "the edited frame 3, handles hidden")
        XCTAssertEqual(surface.picture(before: t0 + 1.0), original[3], "Ctrl+Z: the original frame 3")
        XCTAssertEqual(app.message, "undone: no unsaved edits")
        XCTAssertEqual(try read("s.lua"), text, "nothing written without Ctrl+S")
    }

    /// `A` adds a 90x90 sketch at the mouse (its corners whole pixels), its
    /// handles are drawn, Ctrl+S writes exactly its call, a named local in
    /// the rectangle form, before `prepare()`, and the picture is then the
    /// saved scene's render.
    func testAAddsASketchAtTheMouseAndCtrlSSavesIt() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 200, height: 150))
        let text = """
        image("img.png")
        addSketch{x = 10, y = 10, w = 40, h = 40}
        prepare()
        impulse(1, 1, 0.5)
        wait(0.5)

        """
        try box.write("s.lua", text)
        let a = imageArea(200, 150)
        let clock = ManualClock()
        let t0 = clock.t
        let (status, surface, app) = try runStudio("s.lua", clock: clock, script: [
            (t0, key(.space)),
            (t0 + 0.1, .mouseMove(x: a.x + 100, y: a.y + 75)),
            (t0 + 0.2, key(.a)),
            (t0 + 0.4, key(.h)),
            (t0 + 0.5, key(.s, ctrl: true)),
            (t0 + 0.7, .quit),
        ])
        XCTAssertEqual(status, 0)
        let line = "local region1 = addSketch{x = 56, y = 31, w = 90, h = 90}\n"
        let saved = try read("s.lua")
        XCTAssertEqual(saved, text.replacingOccurrences(of: "prepare()\n", with: line + "prepare()\n"))
        XCTAssertEqual(app.message, "saved s.lua: 1 added")
        let without = try XCTUnwrap(surface.picture(before: t0 + 0.2))
        let with = try XCTUnwrap(surface.picture(before: t0 + 0.4))
        XCTAssertGreaterThan(agreement(with, without) { x, y in x >= 50 && x <= 150 && y >= 25 && y <= 125 }.differing, 100,
                             "the added sketch's handles are drawn")
        try box.write("saved.lua", saved)
        let expected = try headlessFrames("saved.lua", count: 1)
        XCTAssertEqual(surface.picture(before: t0 + 0.7), expected[0], "the saved scene's frame 0, handles hidden")
    }

    /// A sketch made in a loop is computed: a drag on its corner says so
    /// (naming the line) and edits nothing; Ctrl+S then writes nothing.
    func testComputedSketchesAreLocked() throws {
        var px = [UInt8](repeating: 180, count: 200 * 150 * 4)
        for i in stride(from: 3, to: px.count, by: 4) { px[i] = 255 }
        try box.writeImage("img.png", RGBAImage(width: 200, height: 150, pixels: px))
        let text = """
        image("img.png")
        for i = 0, 1 do
          addSketch{x = 20 + i * 90, y = 20, w = 60, h = 60}
        end
        prepare()
        wait(1)

        """
        try box.write("locked.lua", text)
        let a = imageArea(200, 150)
        let clock = ManualClock()
        let t0 = clock.t
        var said = ""
        let (status, _, app) = try runStudio("locked.lua", clock: clock, script: [
            (t0 + 0.1, .mouseDown(x: a.x + 20, y: a.y + 20)),
            (t0 + 0.15, .mouseMove(x: a.x + 25, y: a.y + 25)),
            (t0 + 0.2, .mouseUp(x: a.x + 30, y: a.y + 30)),
            (t0 + 0.4, key(.s, ctrl: true)),
            (t0 + 0.5, .quit),
        ]) { surface, app in
            surface.actions = [(t0 + 0.3, { said = app.message })]
        }
        XCTAssertEqual(status, 0)
        XCTAssertEqual(said, box.path("locked.lua") + ":3: this sketch is computed; edit the script")
        XCTAssertEqual(app.message, "nothing to save")
        XCTAssertEqual(try read("locked.lua"), text)
        XCTAssertFalse(app.session.hasUnsavedEdits, "no unsaved edits at quit")
    }
}

/// Pokes and shakes in-process: a drag inside a region moves it (and
/// nothing else), Shift+arrows shake, a take records them to the
/// millisecond of the manual clock and renders as performed.
final class StudioInProcessPokeTests: InProcessStudioCase {
    /// Paused on frame 2, a drag inside the region (handles hidden), then
    /// frames 3-8 one by one: each picture against the still one.
    func pokeFrames(_ text: String, from: (Int, Int), to: (Int, Int)) throws -> (still: RGBAImage, frames: [RGBAImage], app: StudioApp) {
        try box.writeImage("img.png", Sandbox.pattern(width: 200, height: 150, checker: 4))
        try box.write("s.lua", text)
        let expected = try headlessFrames("s.lua", count: 3)
        let a = imageArea(200, 150)
        let clock = ManualClock()
        let t0 = clock.t
        var script: [(at: Double, input: StudioInput)] = [
            (t0, key(.space)), (t0 + 0.05, key(.h)), (t0 + 0.1, key(.right)), (t0 + 0.15, key(.right)),
            (t0 + 0.2, .mouseDown(x: a.x + from.0, y: a.y + from.1)),
            (t0 + 0.25, .mouseUp(x: a.x + to.0, y: a.y + to.1)),
        ]
        for k in 3...8 { script.append((t0 + 0.3 + 0.05 * Double(k - 3), key(.right))) }
        script.append((t0 + 0.7, .quit))
        let (status, surface, app) = try runStudio("s.lua", clock: clock, script: script)
        XCTAssertEqual(status, 0)
        let still = try XCTUnwrap(surface.picture(before: t0 + 0.2))
        XCTAssertEqual(still, expected[2], "frame 2 before the poke is the headless frame")
        let frames = try (3...8).map { k in try XCTUnwrap(surface.picture(before: t0 + 0.35 + 0.05 * Double(k - 3))) }
        return (still, frames, app)
    }

    func testADragInsideARegionMovesItAndNothingElse() throws {
        let (still, frames, app) = try pokeFrames("""
        image("img.png")
        addSketch{x = 40, y = 30, w = 100, h = 80}
        prepare()
        wait(3)
        """, from: (90, 70), to: (120, 60))
        XCTAssertEqual(app.message, "touch(90.5, 70.5, 120.5, 60.5) at 0.067 s")
        XCTAssertEqual(app.session.performed, [PerformedEvent(time: 0.067, action: .touch(from: Point(90.5, 70.5), to: Point(120.5, 60.5)))])
        var moved = false
        for (i, shot) in frames.enumerated() {
            let outside = agreement(shot, still, tolerance: 2) { x, y in x < 38 || x > 142 || y < 28 || y > 112 }
            XCTAssertEqual(outside.differing, 0, "frame \(i + 3): pixels outside the region changed")
            let inside = agreement(shot, still, tolerance: 2) { x, y in x > 45 && x < 135 && y > 35 && y < 105 }
            if inside.differing > 100 { moved = true }
        }
        XCTAssertTrue(moved, "the region did not move after the drag")
    }

    /// A region drawn inside another (the inner one prepared last): a drag
    /// inside it moves it alone, the outer region around it stays still.
    func testADragInsideANestedRegionMovesTheInnerOneOnly() throws {
        let (still, frames, app) = try pokeFrames("""
        image("img.png")
        addSketch{x = 20, y = 10, w = 160, h = 130}
        addSketch{x = 60, y = 40, w = 60, h = 50}
        prepare()
        wait(3)
        """, from: (90, 65), to: (115, 55))
        XCTAssertEqual(app.message, "touch(90.5, 65.5, 115.5, 55.5) at 0.067 s")
        var moved = false
        for (i, shot) in frames.enumerated() {
            let outside = agreement(shot, still, tolerance: 2) { x, y in x < 58 || x > 122 || y < 38 || y > 92 }
            XCTAssertEqual(outside.differing, 0, "frame \(i + 3): pixels outside the inner region changed")
            let inside = agreement(shot, still, tolerance: 2) { x, y in x > 65 && x < 115 && y > 45 && y < 85 }
            if inside.differing > 50 { moved = true }
        }
        XCTAssertTrue(moved, "the inner region did not move after the drag")
    }

    /// R, a poke 0.35 s into the take, R: the take file's exact text; its
    /// render is still before the poke and moves the poked region after it.
    func testARecordedTakeRendersThePoke() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 200, height: 150, checker: 4))
        let sceneText = """
        image("img.png")
        addSketch{x = 40, y = 30, w = 100, h = 80}
        prepare()
        wait(0.5)
        """
        try box.write("s.lua", sceneText)
        let a = imageArea(200, 150)
        let clock = ManualClock()
        let t0 = clock.t
        var said: [String] = []
        let (status, surface, app) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.1, key(.r)),
            (t0 + 0.4, .mouseDown(x: a.x + 90, y: a.y + 70)),
            (t0 + 0.45, .mouseUp(x: a.x + 60, y: a.y + 90)),
            (t0 + 0.8, key(.r)),
            (t0 + 0.9, .quit),
        ]) { surface, app in
            surface.actions = [(t0 + 0.2, { said.append(app.message) }), (t0 + 0.5, { said.append(app.message) })]
        }
        XCTAssertEqual(status, 0)
        XCTAssertEqual(said, ["recording from the end of the clip: poke and shake; R writes the take",
                              "touch(90.5, 70.5, 60.5, 90.5) at +0.350 s"])
        XCTAssertEqual(app.session.scriptedDuration, 0.5, "recording from 0.500 s")
        // The timeline: blue up to the playhead before the take, red during
        // it, the poke's yellow mark between the scripted end (grey) and
        // the playhead (white).
        func columns(_ img: RGBAImage, y: Int, _ c: (UInt8, UInt8, UInt8)) -> [Int] {
            (0..<img.width).filter { let p = img.pixel($0, y); return (p.r, p.g, p.b) == c }
        }
        let before = try XCTUnwrap(surface.chromes.last { $0.at < t0 + 0.1 }?.image)
        XCTAssertEqual(columns(before, y: 10, (70, 110, 180)).first, Layout.timelinePad)
        XCTAssertEqual(columns(before, y: 5, (250, 200, 60)), [])
        let during = try XCTUnwrap(surface.chromes.last { $0.at < t0 + 0.8 }?.image)
        XCTAssertEqual(columns(during, y: 10, (170, 50, 50)).first, Layout.timelinePad)
        let mark = columns(during, y: 5, (250, 200, 60))
        XCTAssertEqual(mark.count, 3, "one poke mark")
        let end = columns(during, y: 2, (220, 220, 220)), head = columns(during, y: 1, (255, 255, 255))
        XCTAssertEqual(end.count, 1)
        XCTAssertEqual(head.count, 3)
        XCTAssertTrue((end.first ?? .max) < (mark.first ?? -1) && (mark.last ?? .max) < (head.first ?? -1), "\(end) \(mark) \(head)")
        XCTAssertTrue(app.message.hasPrefix("wrote ") && app.message.hasSuffix("s-take-1.lua (1 event)"), app.message)
        let take = "s-take-1.lua"
        let text = try read(take)
        XCTAssertEqual(text, sceneText + """


        -- Take recorded with `wobble-run edit s.lua`: what was performed
        -- after the scripted clip, to the millisecond.
        wait(0.35)
        touch(90.5, 70.5, 60.5, 90.5)
        untilStill()

        """)
        XCTAssertTrue(text.hasPrefix(sceneText))
        // wait(0.35) then touch(...) then untilStill().
        let block = String(text.dropFirst(sceneText.count))
        guard let waitLine = block.split(separator: "\n").first(where: { $0.hasPrefix("wait(") }),
              let offset = Double(waitLine.dropFirst(5).dropLast()) else {
            return XCTFail("no wait(..) in the take:\n\(text)")
        }
        XCTAssertTrue(text.contains("\ntouch("), text)
        XCTAssertTrue(text.hasSuffix("untilStill()\n"), text)
        let poke = 0.5 + offset
        let first = Int((poke * 30).rounded(.up))
        let r = try Tool.run([take, "--frames", "0-\(first + 4)", "-o", "frames/", "-q"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        func frame(_ k: Int) throws -> RGBAImage { try ImageIO.load(path: box.path(String(format: "frames/frame_%05d.png", k))) }
        let still = try frame(0)
        for k in stride(from: 0, to: first, by: 3) {
            XCTAssertEqual(agreement(try frame(k), still, tolerance: 0).differing, 0, "frame \(k) moves before the poke at \(poke) s")
        }
        let later = try frame(first + 4)
        let inside = agreement(later, still) { x, y in x > 45 && x < 135 && y > 35 && y < 105 }
        XCTAssertGreaterThan(inside.differing, 100, "the poked region does not move after the poke")
        let outside = agreement(later, still) { x, y in x < 38 || x > 142 || y < 28 || y > 112 }
        XCTAssertEqual(outside.differing, 0)
    }

    /// Shift+arrows shake (1.5 g that way; up is +y) during a take: the
    /// take enables motion and has each shake at its millisecond.
    func testShiftArrowsShakeAndATakeRecordsThem() throws {
        let sceneText = try writeShakeScene()
        let clock = ManualClock()
        let t0 = clock.t
        let (status, _, app) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.1, key(.r)),
            (t0 + 0.3, key(.left, shift: true)),
            (t0 + 0.45, key(.up, shift: true)),
            (t0 + 0.5, key(.right, shift: true)),
            (t0 + 0.75, key(.down, shift: true)),
            (t0 + 0.9, key(.r)),
            (t0 + 1.0, .quit),
        ])
        XCTAssertEqual(status, 0)
        XCTAssertTrue(app.message.hasSuffix("s-take-1.lua (4 events)"), app.message)
        XCTAssertEqual(try read("s-take-1.lua"), sceneText + """

        -- Take recorded with `wobble-run edit s.lua`: what was performed
        -- after the scripted clip, to the millisecond.
        enableMotion()
        wait(0.2)
        shake(-1.5, 0)
        wait(0.15)
        shake(0, 1.5)
        wait(0.05)
        shake(1.5, 0)
        wait(0.25)
        shake(0, -1.5)
        untilStill()

        """)
        // Its render moves the region after the first shake (frame 15 + 6).
        let r = try Tool.run(["s-take-1.lua", "--backend", "cpu", "--frames", "0-27", "-o", "frames/", "-q"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        func frame(_ k: Int) throws -> RGBAImage { try ImageIO.load(path: box.path(String(format: "frames/frame_%05d.png", k))) }
        XCTAssertEqual(try frame(20), try frame(0), "still until the first shake at 0.7 s")
        XCTAssertGreaterThan(agreement(try frame(27), try frame(0)).differing, 100, "the shake moves the region")
    }
}

/// A scene changed on disk while the studio runs, in-process: the file
/// watcher sees it (the test waits for its quiet period on wall time, the
/// script held meanwhile), the new run is shown at the playhead's time.
final class StudioInProcessReloadTests: InProcessStudioCase {
    func testEditingTheSceneOnDiskUpdatesTheWindow() throws {
        // A plain light image: the handles' black edges are easy to find.
        try box.writeImage("img.png", RGBAImage(width: 200, height: 120, pixels: [UInt8](repeating: 230, count: 200 * 120 * 4)))
        func text(_ x: Int) -> String {
            "image('img.png')\naddSketch{x = \(x), y = 30, w = 50, h = 50}\nprepare()\nwait(1)\n"
        }
        try box.write("s.lua", text(20))
        let clock = ManualClock()
        let t0 = clock.t
        var shots: [RGBAImage?] = []
        var errorShown = false
        let (status, surface, app) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.1, key(.space)),
            (t0 + 0.7, key(.right)),     // it still answers keys
            (t0 + 0.9, .quit),
        ]) { surface, app in
            surface.actions = [
                (t0 + 0.2, {
                    shots.append(surface.picture(before: .infinity))
                    try? self.box.write("s.lua", text(120))
                    surface.holdWhile = { app.session.generation < 2 }
                }),
                (t0 + 0.4, {
                    shots.append(surface.picture(before: .infinity))
                    // A broken scene: the error is shown and the last good clip stays.
                    try? self.box.write("s.lua", text(120) + "error('broken on purpose')\n")
                    surface.holdWhile = { !app.messageIsError }
                }),
                (t0 + 0.6, {
                    errorShown = app.messageIsError
                    shots.append(surface.picture(before: .infinity))
                }),
            ]
        }
        XCTAssertEqual(status, 0)
        XCTAssertEqual(shots.count, 3)
        func darkColumn(_ img: RGBAImage?, _ x: Int) -> Bool {
            guard let img else { return false }
            return (40..<70).filter { y in (x - 1...x + 1).contains { img.pixel($0, y).r < 100 } }.count > 20
        }
        XCTAssertTrue(darkColumn(shots[0], 20))
        XCTAssertFalse(darkColumn(shots[0], 120))
        XCTAssertFalse(darkColumn(shots[1], 20), "the old region's edge is still drawn")
        XCTAssertTrue(darkColumn(shots[1], 120), "the region did not move")
        XCTAssertTrue(errorShown)
        XCTAssertTrue(app.message.hasSuffix("s.lua:5: broken on purpose (playing the last good run)"), app.message)
        XCTAssertEqual(shots[2], shots[1], "the last good clip stays")
        XCTAssertTrue(surface.frames.contains { $0.at > t0 + 0.6 }, "the studio answers keys after the error")
    }

    /// Paused on frame 3, the scene changed on disk: the new run is shown
    /// at frame 3 (the playhead keeps its time), as the headless render of
    /// the new scene has it.
    func testAReloadKeepsThePlayheadsTime() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        func text(_ strength: Double) -> String {
            "image('img.png')\naddSketch{x = 10, y = 10, w = 100, h = 70}\nprepare()\nimpulse(1, \(strength), 0.5)\nwait(1)\n"
        }
        try box.write("new.lua", text(-1))
        let expected = try headlessFrames("new.lua", count: 6)
        try box.write("s.lua", text(1))
        let old = try headlessFrames("s.lua", count: 6, folder: "old")
        XCTAssertNotEqual(old[3], expected[3])
        let clock = ManualClock()
        let t0 = clock.t
        var shown: RGBAImage?
        let (status, surface, app) = try runStudio("s.lua", clock: clock, script: [
            (t0, key(.h)),
            (t0 + 0.1, key(.space)),      // frame 3
            (t0 + 0.5, .quit),
        ]) { surface, app in
            surface.actions = [
                (t0 + 0.2, {
                    try? self.box.write("s.lua", text(-1))
                    surface.holdWhile = { app.session.generation < 2 }
                }),
                (t0 + 0.3, { shown = surface.picture(before: .infinity) }),
            ]
        }
        XCTAssertEqual(status, 0)
        XCTAssertEqual(app.message, "reloaded: s.lua changed")
        XCTAssertEqual(surface.picture(before: t0 + 0.2), old[3])
        XCTAssertEqual(shown, expected[3], "the new run's frame 3")
    }
}
