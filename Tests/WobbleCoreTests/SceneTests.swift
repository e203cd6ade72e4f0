import XCTest
@testable import WobbleCore

/// The scene, the virtual clock and the timeline.
final class SceneTests: XCTestCase {
    func makeScene(fps: Double? = nil) -> Scene {
        let s = Scene(fixedFPS: fps)
        s.imageSize = (200, 100)
        return s
    }

    func testFrameCountRule() throws {
        let s = makeScene()
        for _ in 0..<3 { try s.wait(0.1) }
        XCTAssertEqual(try s.finish().frameCount, 9)
        XCTAssertEqual(try makeScene().finish().frameCount, 1)
        XCTAssertEqual(Scene.frameCount(end: 1, fps: 30), 30)
        XCTAssertEqual(Scene.frameCount(end: 1 + 5e-10, fps: 30), 30)
        XCTAssertEqual(Scene.frameCount(end: 1 + 2e-9, fps: 30), 31)
        XCTAssertEqual(Scene.frameCount(end: 0.05, fps: 30), 2)
        XCTAssertEqual(Scene.frameCount(end: 2.5, fps: 24), 60)
    }

    func testFPSLockedOnceAFrameExists() throws {
        let s = makeScene()
        try s.setFPS(25)
        try s.setFPS(24)
        try s.wait(0.5)
        try s.setFPS(24)
        XCTAssertThrowsError(try s.setFPS(30)) { e in
            XCTAssertEqual(e as? SceneError, SceneError("fps", "cannot change the frame rate (24) once a frame has been recorded"))
        }
        let fixed = makeScene(fps: 10)
        try fixed.setFPS(50)
        try fixed.wait(1)
        try fixed.setFPS(60)
        XCTAssertEqual(fixed.fps, 10)
        XCTAssertEqual(try fixed.finish().frameCount, 10)
        XCTAssertThrowsError(try s.setFPS(0))
    }

    func testImageNeededBeforeFirstFrame() throws {
        let s = Scene()
        s.addSketch()
        try s.wait(0)   // frame 0 not yet fixed
        XCTAssertThrowsError(try s.wait(0.1)) { e in
            XCTAssertEqual((e as? SceneError)?.message, "no image: call image(path) before the first frame, or pass --image")
        }
        XCTAssertThrowsError(try Scene().finish())
    }

    func testPrepareImpulseAndModels() throws {
        let s = makeScene()
        let a = s.addSketch(lt: Point(0, 0), rt: Point(100, 0), rb: Point(100, 100), lb: Point(0, 100))
        s.addSketch()
        XCTAssertEqual(s.sketches.count, 2)
        try s.wait(0.5)
        let models = s.prepare()
        XCTAssertEqual(models.count, 2)
        XCTAssertTrue(s.sketches.isEmpty)
        XCTAssertEqual(models[0].state(at: s.now).cycleStart, 0.5)
        XCTAssertEqual(models[0].state(at: s.now).direction, .zero)
        XCTAssertTrue(s.model(for: a) === models[0])
        XCTAssertThrowsError(try s.impulse(models[0], dx: 0, dy: 0)) { e in
            XCTAssertEqual(e as? SceneError, SceneError("impulse", "direction must be non-zero"))
        }
        try s.impulse(models[0], dx: 3, dy: 4, amplitude: 0.5)
        XCTAssertEqual(models[0].state(at: s.now).direction.x, 0.6, accuracy: 1e-12)
        XCTAssertEqual(models[0].state(at: s.now).direction.y, 0.8, accuracy: 1e-12)
        try s.wait(1.3)
        XCTAssertEqual(models[0].state(at: s.now).amplitude, 0.35, accuracy: 1e-12)
        XCTAssertEqual(models[0].state(at: s.now).cycleStart, 1.7, accuracy: 1e-12)
        s.prepare()
        XCTAssertTrue(s.models.isEmpty)
        XCTAssertThrowsError(try s.impulse(models[0], dx: 1, dy: 0)) { e in
            XCTAssertEqual((e as? SceneError)?.message, "wobble model is no longer live (after reset() or another prepare())")
        }
        // Huge but finite directions normalise without overflow.
        let b = s.addSketch()
        _ = b
        let m = s.prepare()[0]
        try s.impulse(nil, dx: 1e308, dy: 1e308)
        XCTAssertEqual(m.state(at: s.now).direction.x, 1 / 2.0.squareRoot(), accuracy: 1e-12)
    }

    func testTouchHitsFirstContainingModel() throws {
        let s = makeScene()
        s.addSketch(lt: Point(0, 0), rt: Point(100, 0), rb: Point(100, 100), lb: Point(0, 100))
        s.addSketch(lt: Point(50, 0), rt: Point(150, 0), rb: Point(150, 100), lb: Point(50, 100))
        let ms = s.prepare()
        XCTAssertNil(try s.touch(from: Point(190, 50), to: Point(195, 50)))
        XCTAssertNil(try s.touch(from: Point(60, 50), to: Point(60, 50)))
        XCTAssertTrue(try s.touch(from: Point(60, 50), to: Point(60, 40)) === ms[0])
        XCTAssertEqual(ms[0].state(at: s.now).direction, Point(0, -1))
        XCTAssertTrue(try s.touch(from: Point(140, 50), to: Point(150, 50)) === ms[1])
    }

    func testTouchHitsTheInnermostContainingModel() throws {
        let s = makeScene()
        // A whole body, a head inside it (prepared after), a second body of the same area.
        s.addSketch(lt: Point(0, 0), rt: Point(100, 0), rb: Point(100, 100), lb: Point(0, 100))
        s.addSketch(lt: Point(30, 30), rt: Point(60, 30), rb: Point(60, 60), lb: Point(30, 60))
        s.addSketch(lt: Point(10, 0), rt: Point(110, 0), rb: Point(110, 100), lb: Point(10, 100))
        let ms = s.prepare()
        XCTAssertTrue(try s.touch(from: Point(45, 45), to: Point(50, 45)) === ms[1], "the head, not the body around it")
        XCTAssertEqual(ms[1].state(at: s.now).amplitude, 1)
        XCTAssertEqual(ms[0].state(at: s.now).amplitude, 0)
        XCTAssertEqual(ms[2].state(at: s.now).amplitude, 0)
        // Outside the head: the two bodies tie on area, the first wins.
        XCTAssertTrue(try s.touch(from: Point(20, 80), to: Point(20, 90)) === ms[0])
        XCTAssertEqual(ms[2].state(at: s.now).amplitude, 0)
        XCTAssertEqual(RegionShape.innermost(ms.map(\.shape), containing: Point(105, 50)), 2)
        XCTAssertNil(RegionShape.innermost(ms.map(\.shape), containing: Point(150, 50)))
        XCTAssertEqual(ms[1].shape.cornerArea, 900)
    }

    func testShake() throws {
        let s = makeScene()
        s.addSketch()
        let m = s.prepare()[0]
        XCTAssertThrowsError(try s.shake(ax: 2, ay: 0)) { e in
            XCTAssertEqual(e as? SceneError, SceneError("shake", "motion is off: call enableMotion() first"))
        }
        s.enableMotion()
        try s.shake(ax: 0.6, ay: 0.6)    // |a| < 1: nothing
        XCTAssertNil(m.impulse)
        try s.shake(ax: 0, ay: 1.5)       // device y up → image y down: direction (0, -1)
        XCTAssertEqual(m.state(at: s.now).direction, Point(0, -1))
        XCTAssertEqual(m.state(at: s.now).amplitude, 1)
        try s.wait(0.1)
        try s.shake(ax: 2, ay: 0)         // amplitude 1 >= 0.3: ignored
        XCTAssertEqual(m.state(at: s.now).direction, Point(0, -1))
        try s.wait(1.2 * 5)               // 0.16807 < 0.3
        try s.shake(ax: 2, ay: 0)
        XCTAssertEqual(m.state(at: s.now).direction, Point(1, 0))
        s.reset()
        XCTAssertFalse(s.motionEnabled)
        XCTAssertThrowsError(try s.shake(ax: 2, ay: 0))
    }

    func testTraceSamplesAppliedWhenTheClockReachesThem() throws {
        let s = makeScene()
        s.addSketch()
        let m = s.prepare()[0]
        try s.wait(1)
        let trace = try parseMotionTrace("t,ax,ay\n0.5, 0, 2\n\n0.25,0.1,0.1\n", fileName: "trace.csv")
        XCTAssertEqual(trace, [MotionSample(time: 0.5, ax: 0, ay: 2), MotionSample(time: 0.25, ax: 0.1, ay: 0.1)])
        s.enableMotion(trace: trace)
        try s.wait(0.5 - 5e-10)            // ends at the sample's time (± 1e-9): applied
        XCTAssertEqual(m.impulse?.start ?? -1, 1.5, accuracy: 1e-12)
        XCTAssertEqual(m.state(at: s.now).direction, Point(0, -1))
        let clip = try s.finish()
        // Frame 45 is at 1.5 s: the impulse is there, with τ = 0 (progress 0, so no region moves yet).
        XCTAssertTrue(clip.frame(45).regions.isEmpty)
        XCTAssertEqual(clip.frame(44).regions.count, 0)
        XCTAssertThrowsError(try parseMotionTrace("t,ax,ay\n0.1,1\n", fileName: "x.csv")) { e in
            XCTAssertEqual((e as? SceneError)?.message, "x.csv:2: expected 3 columns t,ax,ay, got 2")
        }
        XCTAssertThrowsError(try parseMotionTrace("0.1,1,abc\n", fileName: "x.csv")) { e in
            XCTAssertEqual((e as? SceneError)?.message, "x.csv:1:7: column ay: expected a finite number")
        }
        // The column counts blanks; the field itself is never quoted.
        XCTAssertThrowsError(try parseMotionTrace("t,ax,ay\r\n0.1,  secret-text , 1\r\n", fileName: "x.csv")) { e in
            XCTAssertEqual((e as? SceneError)?.message, "x.csv:2:7: column ax: expected a finite number")
        }
        XCTAssertThrowsError(try parseMotionTrace("-1,1,1\n", fileName: "x.csv"))
    }

    func testTraceWithCRLFLineEndsAndByteOrderMark() throws {
        // Spreadsheets write CSV with CRLF line ends (RFC 4180) and often a UTF-8 BOM.
        let trace = try parseMotionTrace("\u{FEFF}t,ax,ay\r\n0.5,0,2\r\n\r\n0.25,0.1,0.1\r\n", fileName: "trace.csv")
        XCTAssertEqual(trace, [MotionSample(time: 0.5, ax: 0, ay: 2), MotionSample(time: 0.25, ax: 0.1, ay: 0.1)])
        XCTAssertThrowsError(try parseMotionTrace("0.1,1,1\r\n0.2,1\r\n", fileName: "x.csv")) { e in
            XCTAssertEqual((e as? SceneError)?.message, "x.csv:2: expected 3 columns t,ax,ay, got 2")
        }
    }

    func testUntilStill() throws {
        let s = makeScene()
        s.addSketch()
        let m = s.prepare()[0]
        XCTAssertTrue(try s.untilStill())
        XCTAssertEqual(s.now, 0)
        try s.impulse(m, dx: 1, dy: 0)
        XCTAssertFalse(try s.untilStill(maxSeconds: 1))
        XCTAssertEqual(s.now, 1, accuracy: 1e-12)
        XCTAssertTrue(try s.untilStill())
        XCTAssertEqual(s.now, 7 * 1.2, accuracy: 1e-9)
        XCTAssertEqual(m.state(at: s.now).amplitude, 0)
    }

    func testTimelineFramesArePureFunctionsOfTime() throws {
        let s = makeScene()
        s.addSketch(lt: Point(0, 0), rt: Point(100, 0), rb: Point(100, 100), lb: Point(0, 100))
        s.overlay = true
        try s.wait(0.1)
        let m = s.prepare()[0]
        try s.impulse(m, dx: 1, dy: 0)
        try s.wait(1)
        s.reset()
        try s.wait(0.5)
        let clip = try s.finish()
        XCTAssertEqual(clip.frameCount, 48)
        XCTAssertEqual(clip.frame(0).overlay.count, 1)     // before prepare: the sketch
        XCTAssertTrue(clip.frame(0).regions.isEmpty)
        XCTAssertTrue(clip.frame(3).regions.isEmpty)       // t = 0.1: τ = 0
        let f = clip.frame(12)                              // t = 0.4, τ = 0.3 = D/4
        XCTAssertEqual(f.regions.count, 1)
        XCTAssertEqual(f.regions[0].swing, -1, accuracy: 1e-9)   // cycle progress at τ = D/4
        XCTAssertEqual(f.regions[0].direction, Point(1, 0))
        XCTAssertEqual(f.regions[0].peak, 8, accuracy: 1e-12)
        XCTAssertTrue(f.overlay.isEmpty)
        XCTAssertTrue(clip.frame(40).regions.isEmpty)       // after reset
        XCTAssertEqual(clip.frame(12), clip.frame(12))
    }

    func testMaxFramesCheckedBeforeRendering() throws {
        let s = Scene(maxFrames: 10)
        s.imageSize = (10, 10)
        try s.wait(0.3)
        XCTAssertThrowsError(try s.wait(1e12)) { e in
            XCTAssertEqual((e as? SceneError)?.function, "wait")
            XCTAssertTrue((e as? SceneError)?.message.hasSuffix("more than the limit of 10 (--max-frames)") ?? false)
        }
    }
}
