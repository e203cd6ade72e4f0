import XCTest
@testable import WobbleCore

/// `loop()`: the clip is one period of its own steady state (closed form).
final class LoopTests: XCTestCase {
    func makeScene() -> Scene {
        let s = Scene()
        s.imageSize = (200, 200)
        return s
    }

    /// The readings of `kicks` repeated `periods` times (from rest, by the
    /// models' own rules: the independent reference) at `t` of the last period.
    func repeated(_ p: WobbleParameters, _ kicks: [Impulse], period: Double, periods: Int, at t: Double) -> MotionReading {
        var history: [Impulse] = []
        let model = p.model
        let base = Double(periods - 1) * period
        for n in 0 ..< periods {
            for k in kicks where Double(n) * period + k.start <= base + t + timeEpsilon {
                history = model.adding(Impulse(start: Double(n) * period + k.start, direction: k.direction, amplitude: k.amplitude), to: history)
            }
        }
        return model.reading(history, at: base + t, preparedAt: 0)
    }

    func assertSame(_ a: MotionReading, _ b: MotionReading, _ message: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(a.amplitude, b.amplitude, accuracy: 1e-9, message, file: file, line: line)
        XCTAssertEqual(a.level * a.swing * a.offsetDirection.x, b.level * b.swing * b.offsetDirection.x, accuracy: 1e-9, message, file: file, line: line)
        XCTAssertEqual(a.level * a.swing * a.offsetDirection.y, b.level * b.swing * b.offsetDirection.y, accuracy: 1e-9, message, file: file, line: line)
    }

    func testClassicAndSpringEqualTheirKicksRepeatedForManyPeriods() {
        let kicks = [Impulse(start: 0.1, direction: Point(1, 0), amplitude: 1),
                     Impulse(start: 0.7, direction: Point(0, 1), amplitude: 0.6),
                     Impulse(start: 1.3, direction: Point(-0.6, 0.8), amplitude: 1.5)]
        for p in [WobbleParameters.original, .spring, WobbleParameters(motion: .spring, duration: 0.5, damping: 0.05)] {
            let loop = LoopedMotion(parameters: p, period: 1.5, kicks: kicks)
            for t in stride(from: 0.0, to: 1.5, by: 0.05) {
                assertSame(loop.reading(at: t), repeated(p, kicks, period: 1.5, periods: 60, at: t), "\(p.motion) at \(t)")
            }
            // The frame after the last is frame 0.
            assertSame(loop.reading(at: 1.5), loop.reading(at: 0), "\(p.motion): the seam")
        }
    }

    /// A looping spring never rests: where the spring alone would rest
    /// before the next kick (after 7.8 s of a 12 s period), the loop is the
    /// kicks repeated by a spring that never rests (threshold 0), and the
    /// swing runs on through the seam instead of snapping to 0 (a pop).
    func testALoopingSpringNeverRests() {
        let p = WobbleParameters.spring
        var endless = p
        endless.threshold = 0
        let kicks = [Impulse(start: 2, direction: Point(1, 0), amplitude: 1)]
        XCTAssertLessThan(SpringMotion(p).restTime(kicks), 2 + 8, "from rest, the spring alone rests before the next kick")
        let loop = LoopedMotion(parameters: p, period: 12, kicks: kicks)
        for t in stride(from: 0.0, to: 12, by: 0.25) {
            assertSame(loop.reading(at: t), repeated(endless, kicks, period: 12, periods: 8, at: t), "at \(t)")
        }
        XCTAssertGreaterThan(loop.reading(at: 1).amplitude, 0, "still moving before the kick")
        // Continuous through the old rest point and the seam: the swing a
        // millisecond apart differs by a millisecond's motion (resting
        // dropped it from 0.004 to 0 at once).
        for t in [9.8, 11.999, 1.999] {
            let a = loop.reading(at: t), b = loop.reading(at: t + 0.001)
            XCTAssertEqual(a.level * a.swing * a.offsetDirection.x, b.level * b.swing * b.offsetDirection.x, accuracy: 5e-4, "at \(t)")
        }
    }

    func testAShakeGateJudgedInTheSteadyState() throws {
        // Classic, P = 5 s: a shake at 0.2 s finds the amplitude of its own
        // previous occurrence (4 cycle ends: 0.7⁴ = 0.24 < 0.3): it passes.
        var s = makeScene()
        try s.setLoop()
        s.addSketch(lt: Point(20, 20), rt: Point(120, 20), rb: Point(120, 120), lb: Point(20, 120))
        s.prepare()
        s.enableMotion(trace: [MotionSample(time: 0.2, ax: 1.5, ay: 0)])
        try s.wait(5)
        var clip = try s.finish()
        XCTAssertEqual(clip.loop?.models.first?.motion.kicks, [Impulse(start: 0.2, direction: Point(1, 0), amplitude: 1)])
        XCTAssertEqual(clip.loop?.warnings, [])
        XCTAssertFalse(clip.frame(3).regions.isEmpty, "the previous period's shake still moves at 0.1 s")
        // P = 3 s: 0.7² = 0.49 blocks it, then nothing blocks it: no steady
        // answer (from rest it passes on every other period): a warning.
        s = makeScene()
        try s.setLoop()
        s.addSketch(lt: Point(20, 20), rt: Point(120, 20), rb: Point(120, 120), lb: Point(20, 120))
        s.prepare()
        s.enableMotion(trace: [MotionSample(time: 0.2, ax: 1.5, ay: 0)])
        try s.wait(3)
        clip = try s.finish()
        XCTAssertEqual(clip.loop?.warnings.count, 1)
        XCTAssertTrue(clip.loop?.warnings.first?.hasPrefix("loop: the shakes of model #1 pass their gate on alternate periods") ?? false)
    }

    func testLoopErrorsNameLoop() throws {
        let s = makeScene()
        try s.wait(0.1)
        XCTAssertThrowsError(try s.setLoop()) { e in
            XCTAssertEqual(e as? SceneError, SceneError("loop", "a loop applies to the whole clip: call loop() before the first frame"))
        }
        let t = makeScene()
        try t.setLoop()
        t.addSketch()
        try t.wait(0.5)
        XCTAssertEqual(t.loopProblem("prepare"), SceneError("loop", "prepare() at 0.5 s: a looping scene prepares its models at time 0, so that they play for the whole loop"))
        XCTAssertEqual(t.loopProblem("reset")?.message, "reset() would end the models a loop plays: a looping scene cannot reset")
        XCTAssertThrowsError(try t.untilStill()) { e in
            XCTAssertEqual(e as? SceneError, SceneError("loop", "untilStill() never returns in a looping scene (its models keep moving): use wait(seconds)"))
        }
        t.prepare()   // through the Core API: the end of the clip reports it
        XCTAssertThrowsError(try t.finish()) { e in
            XCTAssertEqual((e as? SceneError)?.function, "loop")
        }
        let u = makeScene()
        try u.setLoop()
        u.addSketch(parameters: WobbleParameters(motion: .spring, damping: 0))
        u.prepare()
        try u.impulse(nil, dx: 1, dy: 0)
        try u.wait(1)
        XCTAssertThrowsError(try u.finish()) { e in
            XCTAssertEqual(e as? SceneError, SceneError("loop", "model #1: a spring with damping = 0 never settles into a loop (give it damping > 0)"))
        }
    }
}
