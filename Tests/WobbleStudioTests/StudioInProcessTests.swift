import Foundation
import XCTest
import WobbleCore
import WobbleEngine
import WobbleMedia
import WobbleRender
@testable import WobbleStudio
@testable import WobbleStudioCore
import WobbleSystem

/// A studio surface for in-process tests: it hands out scripted inputs at
/// times of a manual clock, lets that clock pass by the time the studio
/// would have waited (nothing sleeps), and records every frame presented.
/// A run of the scene takes no manual time: before each wait the surface
/// lets the run in flight finish (`settle`).
final class FakeSurface: StudioSurface {
    let clock: ManualClock
    /// Inputs and the clock time from which each is delivered.
    var script: [(at: Double, input: StudioInput)]
    /// Things the test does (write a file, ...) at clock times, before
    /// the inputs due then.
    var actions: [(at: Double, run: () -> Void)] = []
    /// While this answers true, no scripted input or action is delivered
    /// (the clock goes on passing): something the studio waits for on wall
    /// time (the file watcher's quiet period) is awaited, a millisecond of
    /// wall time per wait.
    var holdWhile: (() -> Bool)?
    private var holdingSince: Date?
    /// Lets the scene's run in flight finish (set by `runStudio`).
    var settle: () -> Void = {}
    /// Manual seconds each present takes (a machine slower than the clip).
    var presentCost = 0.0
    /// Every frame presented and the clock time it was presented at.
    private(set) var frames: [(at: Double, image: RGBAImage?)] = []
    /// The chrome presented with each frame.
    private(set) var chromes: [(at: Double, image: RGBAImage)] = []
    private(set) var size: (Int, Int)
    private var lastScripted: Double?

    init(clock: ManualClock, width: Int, height: Int, script: [(at: Double, input: StudioInput)]) {
        self.clock = clock
        self.script = script
        size = (width, height)
    }

    func events(timeoutMs: Int) -> [StudioInput] {
        settle()
        if let hold = holdWhile {
            holdingSince = holdingSince ?? Date()
            if hold(), Date().timeIntervalSince(holdingSince ?? Date()) < 20 {
                usleep(1000)
                clock.t += max(Double(timeoutMs), 1) / 1000
                return []
            }
            XCTAssertFalse(hold(), "what the script waited for did not come in 20 s")
            holdWhile = nil
            holdingSince = nil
        }
        while let a = actions.first, a.at <= clock.t {
            actions.removeFirst()
            a.run()
            if holdWhile != nil { return [] }
        }
        if let next = script.first, next.at <= clock.t {
            script.removeFirst()
            lastScripted = next.at
            return [next.input]
        }
        // A studio still open long after the last input (it asks before
        // quitting, say): closed, twice, and the test fails.
        if script.isEmpty, let last = lastScripted, clock.t > last + 60 {
            XCTFail("the studio did not quit after the last scripted input")
            return [.quit, .quit]
        }
        // The wait passes on the manual clock (at least a millisecond, so
        // that time goes on), but never past the next scripted input or
        // action: each comes at its exact time.
        var t = clock.t + max(Double(timeoutMs), 1) / 1000
        for next in [script.first?.at, actions.first?.at].compactMap({ $0 }) where next > clock.t { t = min(t, next) }
        clock.t = t
        return []
    }

    /// The last picture presented before clock time `t`.
    func picture(before t: Double) -> RGBAImage? {
        frames.last { $0.at < t && $0.image != nil }?.image
    }

    /// The inspector's column as last set, and every title set.
    private(set) var panel: (image: RGBAImage, x: Int, y: Int)?
    private(set) var titles: [String] = []
    func setPanel(_ image: RGBAImage?, x: Int, y: Int) { panel = image.map { ($0, x, y) } }
    func setTitle(_ title: String) { titles.append(title) }
    func invalidate() {}
    /// The boxes drawn outside the picture (handles there), as set last,
    /// and every set presented.
    var marks: [WindowMark] = []
    private(set) var marksPresented: [[WindowMark]] = []
    /// Where each frame was placed in the window.
    private(set) var frameRects: [(x: Int, y: Int, w: Int, h: Int)] = []
    func adopt(width: Int, height: Int) { size = (width, height) }
    func resize(width: Int, height: Int) { size = (width, height) }
    var position: (Int, Int) { (0, 0) }
    var preserved: Bool { false }
    var drawableMatchesWindow: Bool { true }
    func makeCurrent() throws {}
    func present(imageAt rect: (x: Int, y: Int), chrome: RGBAImage, chromeY: Int,
                 drawImage: (DrawTarget, _ full: Bool) throws -> Void) throws {
        XCTFail("a fake surface has no GL context: frames come through present(frame:)")
    }
    func present(frame: RGBAImage?, frameOpaque: Bool, frameChanged: Bool, frameDirty: [PixelRect]?,
                 frameRect: (x: Int, y: Int, w: Int, h: Int), chrome: RGBAImage, chromeY: Int) throws {
        frames.append((clock.t, frame))
        frameRects.append(frameRect)
        chromes.append((clock.t, chrome))
        marksPresented.append(marks)
        clock.t += presentCost
    }
}

/// What the in-process studio tests share: a sandbox, headless renders to
/// compare with, the real `StudioApp` run over a fake surface on a manual
/// clock (CPU backend).
class InProcessStudioCase: XCTestCase {
    var box: Sandbox!
    /// The audio device a scene with a soundtrack opens (none, by default).
    var audio: () throws -> any AudioSink = { throw AudioUnavailable(description: "no audio device in the tests") }

    override func setUpWithError() throws {
        box = try Sandbox()
    }

    /// The headless CPU render of `scene`, frame by frame (into `folder`).
    func headlessFrames(_ scene: String, count: Int, folder: String = "frames") throws -> [RGBAImage] {
        let r = try Tool.run([scene, "--backend", "cpu", "--frames", "0-\(count - 1)", "-q", "-o", folder + "/"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        return try (0..<count).map { try ImageIO.load(path: box.path(String(format: "\(folder)/frame_%05d.png", $0))) }
    }

    func read(_ name: String) throws -> String { try String(contentsOfFile: box.path(name), encoding: .utf8) }

    /// `s.lua` on a 120x90 `img.png`: one region, a 0.5 s clip, no kick
    /// (what shakes move in a take). Returns the scene's text.
    func writeShakeScene() throws -> String {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        let text = """
        image("img.png")
        addSketch{x = 10, y = 10, w = 100, h = 70}
        prepare()
        wait(0.5)

        """
        try box.write("s.lua", text)
        return text
    }

    /// The window-pixel image area of a picture this size on a 1920x1080 screen.
    func imageArea(_ w: Int, _ h: Int) -> (x: Int, y: Int, w: Int, h: Int) {
        Layout(imageWidth: w, imageHeight: h, screen: (1920, 1080)).imageRect
    }

    /// Runs the studio on `scene` until the script quits it; `prepare`
    /// sees the surface (and the app) before the first wait.
    func runStudio(_ scene: String, clock: ManualClock, script: [(at: Double, input: StudioInput)],
                   prepare: @escaping (FakeSurface, StudioApp) -> Void = { _, _ in }) throws -> (status: Int32, surface: FakeSurface, app: StudioApp) {
        var session = SessionOptions(scenePath: box.path(scene))
        session.backend = .cpu
        let options = Studio.Options(session: session)
        var surface: FakeSurface?
        var app: StudioApp?
        let audio = self.audio
        let factory = SurfaceFactory(
            usableBounds: { (1920, 1080) },
            open: { _, w, h, _ in
                let s = FakeSurface(clock: clock, width: w, height: h, script: script)
                if let app {
                    s.settle = { [unowned app] in
                        XCTAssertTrue(app.core.recorder.waitForWrite(upTo: 60), "a take's write did not end")
                        XCTAssertTrue(app.session.waitForRun(upTo: 60), "a run of the scene did not end")
                    }
                    prepare(s, app)
                }
                surface = s
                return s
            },
            onDisplayLost: { _ in }, audio: audio)
        let made = try StudioApp(options: options, clock: clock, surfaces: factory)
        app = made
        let status = made.run()
        return (status, try XCTUnwrap(surface), made)
    }
}

/// The studio in-process: the real `StudioApp` over a fake surface and a
/// manual clock, its frames compared with the headless tool's.
final class StudioInProcessTests: InProcessStudioCase {
    func testPlaysPausesStepsAndSeeksShowingTheHeadlessFrames() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 40, height: 30))
        // 10 fps, 12 frames, the region moving all the time.
        try box.write("s.lua", """
        image("img.png")
        fps(10)
        addSketch{x = 6, y = 5, w = 28, h = 20, duration = 5}
        prepare()
        impulse(1, 1, 0.3)
        wait(1.2)
        """)
        let expected = try headlessFrames("s.lua", count: 12)
        for i in 1..<expected.count { XCTAssertNotEqual(expected[i], expected[i - 1], "frame \(i) moves") }
        let clock = ManualClock()
        let t0 = clock.t
        let (status, surface, _) = try runStudio("s.lua", clock: clock, script: [
            (t0, .key(.h, shift: false, ctrl: false)),          // handles off: the bare frame
            (t0 + 0.35, .key(.space, shift: false, ctrl: false)),  // pause on frame 3
            (t0 + 0.8, .key(.right, shift: false, ctrl: false)),   // one frame on: 4
            (t0 + 1.0, .key(.right, shift: false, ctrl: false)),   // 5
            (t0 + 1.2, .key(.left, shift: false, ctrl: false)),    // 4
            (t0 + 1.4, .key(.home, shift: false, ctrl: false)),    // 0
            (t0 + 1.6, .key(.space, shift: false, ctrl: false)),   // play again
            (t0 + 1.85, .quit),
        ])
        XCTAssertEqual(status, 0)
        // Which headless frame each presented picture is (nil: none).
        let shown: [(at: Double, k: Int?)] = surface.frames.compactMap { f in
            guard let img = f.image else { return nil }
            return (f.at - t0, expected.firstIndex(of: img))
        }
        XCTAssertFalse(shown.isEmpty)
        XCTAssertTrue(shown.allSatisfy { $0.k != nil }, "every picture shown is a headless frame: \(shown.map(\.k))")
        var sequence: [Int] = []
        for s in shown where s.k != sequence.last { sequence.append(s.k ?? -1) }
        XCTAssertEqual(sequence, [0, 1, 2, 3, 4, 5, 4, 0, 1, 2], "\(shown.map { ($0.at, $0.k ?? -1) })")
        // Playing, frame k is shown at k / fps (on the manual clock).
        for s in shown where s.at < 0.34 {
            if let k = s.k { XCTAssertEqual(s.at, Double(k) / 10, accuracy: 0.011, "frame \(k) shown at \(s.at)") }
        }
        // Paused, nothing new is shown until a key.
        XCTAssertFalse(shown.contains { $0.at > 0.34 && $0.at < 0.79 && $0.k != 3 }, "\(shown.map { ($0.at, $0.k ?? -1) })")
    }

    /// `Home` while playing goes to frame 0 and pauses there (as the arrows
    /// do): `Right` then shows frame 1.
    func testHomePausesAtFrameZero() throws {
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
        let clock = ManualClock()
        let t0 = clock.t
        let (status, surface, _) = try runStudio("s.lua", clock: clock, script: [
            (t0, .key(.h, shift: false, ctrl: false)),
            (t0 + 0.55, .key(.home, shift: false, ctrl: false)),   // playing: frame 0, paused
            (t0 + 1.0, .key(.right, shift: false, ctrl: false)),   // 1
            (t0 + 1.3, .quit),
        ])
        XCTAssertEqual(status, 0)
        var sequence: [Int] = []
        for f in surface.frames where f.at >= t0 + 0.55 {
            guard let img = f.image else { continue }
            let k = expected.firstIndex(of: img) ?? -1
            if k != sequence.last { sequence.append(k) }
        }
        XCTAssertEqual(sequence, [0, 1])
    }

    /// A take recorded in-process: `R`, a poke, `R`; the take's times are
    /// the manual clock's, to the millisecond (a window pixel is its centre
    /// in image pixels: 35 → 35.5 at scale 1).
    func testATakeRecordsThePokeAtItsLiveTime() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        let sceneText = """
        image("img.png")
        addSketch{x = 10, y = 10, w = 100, h = 70}
        prepare()
        wait(0.5)

        """
        try box.write("s.lua", sceneText)
        let area = Layout(imageWidth: 120, imageHeight: 90, screen: (1920, 1080)).imageRect
        XCTAssertEqual(area.w, 120)
        let clock = ManualClock()
        let t0 = clock.t
        let (status, _, _) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.1, .key(.r, shift: false, ctrl: false)),
            (t0 + 0.35, .mouseDown(x: area.x + 35, y: area.y + 30)),
            (t0 + 0.4, .mouseUp(x: area.x + 45, y: area.y + 40)),
            (t0 + 0.9, .key(.r, shift: false, ctrl: false)),
            (t0 + 1.0, .quit),
        ])
        XCTAssertEqual(status, 0)
        let take = try String(contentsOfFile: box.path("s-take-1.lua"), encoding: .utf8)
        XCTAssertEqual(take, sceneText + """

        -- Take recorded with `wobble-run edit s.lua`: what was performed
        -- after the scripted clip, to the millisecond.
        wait(0.3)
        touch(35.5, 30.5, 45.5, 40.5)
        untilStill()

        """)
    }

    /// A take recorded with unsaved edits is of the scene as it plays (the
    /// edits in its text, the scene file untouched), and the window says so
    /// when recording starts and ends: its poke inside the dragged-out part
    /// of the region hits it when the take runs.
    func testATakeWithUnsavedEditsHasThemAndSaysSo() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        let sceneText = """
        image("img.png")
        addSketch{x = 10, y = 10, w = 50, h = 50}
        prepare()
        wait(0.5)

        """
        try box.write("s.lua", sceneText)
        let area = Layout(imageWidth: 120, imageHeight: 90, screen: (1920, 1080)).imageRect
        let clock = ManualClock()
        let t0 = clock.t
        var messages: [String] = []
        let (status, _, _) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.10, .mouseDown(x: area.x + 60, y: area.y + 60)),   // rb
            (t0 + 0.15, .mouseUp(x: area.x + 110, y: area.y + 80)),
            (t0 + 0.30, .key(.r, shift: false, ctrl: false)),
            (t0 + 0.50, .mouseDown(x: area.x + 80, y: area.y + 55)),   // only in the edited region
            (t0 + 0.55, .mouseUp(x: area.x + 85, y: area.y + 57)),
            (t0 + 0.90, .key(.r, shift: false, ctrl: false)),
            (t0 + 1.00, .key(.escape, shift: false, ctrl: false)), (t0 + 1.05, .key(.escape, shift: false, ctrl: false)),
        ]) { surface, app in
            surface.actions = [(t0 + 0.40, { messages.append(app.message) }), (t0 + 0.95, { messages.append(app.message) })]
        }
        XCTAssertEqual(status, 0)
        XCTAssertEqual(messages, [
            "recording from the end of the clip: poke and shake; R writes the take; with the unsaved edits (the scene file has them once saved)",
            "wrote \(box.path("s-take-1.lua")) (1 event); with the unsaved edits (the scene file has them once saved)"])
        XCTAssertEqual(try read("s.lua"), sceneText, "the scene is not saved")
        let take = try read("s-take-1.lua")
        XCTAssertTrue(take.hasPrefix(sceneText.replacingOccurrences(of: "addSketch{x = 10, y = 10, w = 50, h = 50}",
                                                                     with: "addSketch{lt = {10, 10}, rt = {60, 10}, rb = {110, 80}, lb = {10, 60}}")), take)
        XCTAssertTrue(take.contains("touch(80.5, 55.5, 85.5, 57.5)"), take)
        let check = try Tool.run(["s-take-1.lua", "--check"], cwd: box.url)
        XCTAssertEqual(check.status, 0, check.stderr)
        XCTAssertFalse(check.stderr.contains("hits nothing"), check.stderr)
    }

    /// At 1:1 a handle dragged over the timeline (or the inspector's
    /// column) stays at the picture area's edge, where it can be grabbed
    /// again and dragged back.
    func testAHandleDraggedUnderTheChromeStaysWhereItCanBeGrabbed() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        let sceneText = """
        image("img.png")
        addSketch{lt = {10, 10}, rt = {110, 10}, rb = {110, 80}, lb = {10, 80}}
        prepare()
        wait(0.5)

        """
        try box.write("s.lua", sceneText)
        let layout = Layout(imageWidth: 120, imageHeight: 90, screen: (1920, 1080))
        let a = layout.imageRect, area = layout.pictureArea
        XCTAssertEqual(layout.scale, 1)
        // The picture area's last pixels: the handle is kept there.
        let edge = (x: area.x + area.w - 1, y: area.y + area.h - 1)
        let clock = ManualClock()
        let t0 = clock.t
        var held: Point?
        let (status, _, _) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.10, .mouseDown(x: a.x + 110, y: a.y + 80)),              // rb
            (t0 + 0.15, .mouseMove(x: layout.panelRect.x + 40, y: layout.chromeY + 10)),
            (t0 + 0.20, .mouseUp(x: layout.panelRect.x + 40, y: layout.chromeY + 10)),   // over the column and the timeline
            (t0 + 0.40, .mouseDown(x: edge.x, y: edge.y)),                    // grabbed again there
            (t0 + 0.45, .mouseMove(x: a.x + 105, y: a.y + 75)),
            (t0 + 0.50, .mouseUp(x: a.x + 100, y: a.y + 70)),
            (t0 + 0.70, .key(.s, shift: false, ctrl: true)),
            (t0 + 0.80, .quit),
        ]) { surface, app in
            surface.actions = [(t0 + 0.30, { held = app.session.currentState(.call(0))?.points.rb })]
        }
        XCTAssertEqual(status, 0)
        let p = try XCTUnwrap(held)
        let w = layout.windowPoint(p)
        XCTAssertEqual(w.x, Double(edge.x), accuracy: 0.06)
        XCTAssertEqual(w.y, Double(edge.y), accuracy: 0.06)
        // (The handle is at the edge pixel's centre: the second drag moves it from there.)
        XCTAssertEqual(try read("s.lua"), sceneText.replacingOccurrences(of: "rb = {110, 80}", with: "rb = {100.5, 70.5}"))
    }

    /// Dragging a handle, undoing it, dragging another and saving,
    /// in-process: only the literals of the second drag change on disk.
    func testDragUndoDragAndSave() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        let sceneText = """
        image("img.png")
        addSketch{lt = {10, 10}, rt = {110, 10}, rb = {110, 80}, lb = {10, 80}}
        prepare()
        wait(0.5)

        """
        try box.write("s.lua", sceneText)
        let a = Layout(imageWidth: 120, imageHeight: 90, screen: (1920, 1080)).imageRect
        let clock = ManualClock()
        let t0 = clock.t
        let (status, _, _) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.10, .mouseDown(x: a.x + 10, y: a.y + 10)),   // lt
            (t0 + 0.15, .mouseMove(x: a.x + 15, y: a.y + 12)),
            (t0 + 0.20, .mouseUp(x: a.x + 20, y: a.y + 15)),
            (t0 + 0.30, .key(.z, shift: false, ctrl: true)),      // undone
            (t0 + 0.40, .mouseDown(x: a.x + 110, y: a.y + 80)),  // rb
            (t0 + 0.45, .mouseMove(x: a.x + 105, y: a.y + 75)),
            (t0 + 0.50, .mouseUp(x: a.x + 100, y: a.y + 70)),
            (t0 + 0.70, .key(.s, shift: false, ctrl: true)),      // saved
            (t0 + 0.80, .quit),
        ])
        XCTAssertEqual(status, 0)
        XCTAssertEqual(try String(contentsOfFile: box.path("s.lua"), encoding: .utf8),
                       sceneText.replacingOccurrences(of: "rb = {110, 80}", with: "rb = {100, 70}"))
    }
}

/// The window opens at once on a slow scene: the picture the scene names,
/// `running… N s`, and `Esc` quits before the first run ends.
final class StudioFirstRunTests: InProcessStudioCase {
    func testASlowFirstRunOpensTheWindowOnThePictureAndEscQuits() throws {
        let picture = Sandbox.pattern(width: 40, height: 30)
        try box.writeImage("img.png", picture)
        // Seconds of Lua before the scene has a clip.
        try box.write("s.lua", """
        image("img.png")
        local n = 0
        for i = 1, 2e9 do n = n + i end
        addSketch{x = 6, y = 5, w = 28, h = 20}
        prepare()
        wait(0.5)
        """)
        let clock = ManualClock()
        let t0 = clock.t
        var seen: [String] = []
        var generation = -1
        let began = Date()
        let (status, surface, app) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.10, .key(.r, shift: false, ctrl: false)),
            (t0 + 0.30, .key(.escape, shift: false, ctrl: false)),
        ]) { surface, app in
            // The run is not waited for (a real slow scene).
            surface.settle = {}
            surface.actions = [
                (t0 + 0.05, { seen.append(app.message) }),
                (t0 + 0.20, { seen.append(app.message); generation = app.session.generation }),
            ]
        }
        XCTAssertEqual(status, 0)
        XCTAssertLessThan(Date().timeIntervalSince(began), 8, "Esc quit without waiting for the run")
        XCTAssertEqual(generation, 0, "the first run had not ended when Esc came")
        XCTAssertEqual(seen.first, "s.lua: running… 0 s (Esc quits)")
        XCTAssertEqual(seen.last, "s.lua: the scene's first run is still going (0 s); Esc quits", "R waits for the clip")
        let shown = surface.frames.compactMap(\.image)
        XCTAssertFalse(shown.isEmpty, "the picture is presented while the scene runs")
        XCTAssertEqual(shown.first, picture, "the scene's own picture, untouched")
        XCTAssertTrue(app.session.isProvisional)
    }

    /// A quick scene: the window opens on its clip, as before.
    func testAQuickFirstRunOpensOnItsClip() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 40, height: 30))
        try box.write("s.lua", "image(\"img.png\")\nfps(10)\naddSketch{x = 6, y = 5, w = 28, h = 20}\nprepare()\nwait(0.5)\n")
        let clock = ManualClock()
        let t0 = clock.t
        var seen = ""
        let (status, _, app) = try runStudio("s.lua", clock: clock, script: [(t0 + 0.2, .key(.escape, shift: false, ctrl: false))]) { surface, app in
            surface.actions = [(t0 + 0.1, { seen = app.message })]
        }
        XCTAssertEqual(status, 0)
        XCTAssertEqual(seen, "s.lua: 5 frames at 10 fps")
        XCTAssertFalse(app.session.isProvisional)
    }

    /// The clip's line gives its frame rate short, as every message does.
    func testTheClipLineRoundsTheFrameRate() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 40, height: 30))
        try box.write("s.lua", "image(\"img.png\")\nfps(1/3)\naddSketch{x = 6, y = 5, w = 28, h = 20}\nprepare()\nwait(6)\n")
        let clock = ManualClock()
        let t0 = clock.t
        var seen = ""
        let (status, _, _) = try runStudio("s.lua", clock: clock, script: [(t0 + 0.2, .key(.escape, shift: false, ctrl: false))]) { surface, app in
            surface.actions = [(t0 + 0.1, { seen = app.message })]
        }
        XCTAssertEqual(status, 0)
        XCTAssertEqual(seen, "s.lua: 2 frames at 0.333 fps")
    }
}
