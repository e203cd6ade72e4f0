import XCTest
@testable import WobbleCore

/// The spring model against values worked out by hand for the
/// defaults P = 1.2 s, Z = 0.1, E = 0.02:
/// ω = 2π/1.2 = 5.235987755982989, ω_d = ω·√0.99 = 5.209742038047156,
/// t* = acos(0.1)/ω_d = 0.2822844000515224 s, c = √0.99·exp(−Z·ω·t*) =
/// 0.8582765310461202, π/ω_d = 0.6030226891555273 s; one kick of 1 rests at
/// ln(1/(c·0.02))/(Z·ω) = 7.7632953494736565 s.
final class SpringTests: XCTestCase {
    let spring = SpringMotion(.spring)
    let right = Point(1, 0)

    func kicks(_ list: [(Double, Point, Double)]) -> [Impulse] {
        list.reduce(into: [Impulse]()) { h, k in h = spring.adding(Impulse(start: k.0, direction: k.1, amplitude: k.2), to: h) }
    }

    func testConstants() {
        XCTAssertEqual(spring.omegaD, 5.209742038047156, accuracy: 1e-12)
        XCTAssertEqual(spring.peakTime, 0.2822844000515224, accuracy: 1e-12)
        XCTAssertEqual(spring.c, 0.8582765310461202, accuracy: 1e-12)
        XCTAssertEqual(spring.decayRate, 0.5235987755982989, accuracy: 1e-12)
    }

    func testFirstPeakIsExactlyTheAmplitudeAtTStar() {
        for a in [1.0, 0.35, 2.5] {
            let k = kicks([(2, right, a)])
            let s = spring.swing(k, at: 2 + 0.2822844000515224)
            XCTAssertEqual(s.x, a, accuracy: 1e-12)
            XCTAssertEqual(s.y, 0)
            // A maximum: lower on both sides.
            XCTAssertLessThan(spring.swing(k, at: 2 + 0.2822844000515224 - 1e-3).x, s.x)
            XCTAssertLessThan(spring.swing(k, at: 2 + 0.2822844000515224 + 1e-3).x, s.x)
        }
        XCTAssertEqual(spring.response(0.2822844000515224), 1, accuracy: 1e-15)
    }

    func testZeroCrossingsAtMultiplesOfPiOverOmegaD() {
        let k = kicks([(1, Point(0, -1), 1)])
        XCTAssertEqual(spring.swing(k, at: 1).y, 0)
        for n in 1...12 {
            let t = 1 + Double(n) * 0.6030226891555273
            XCTAssertEqual(spring.swing(k, at: t).y, 0, accuracy: 1e-12, "crossing \(n)")
            // Between crossings the sign alternates: along u first (y < 0 for u = (0, -1)).
            let mid = spring.swing(k, at: t - 0.3).y
            XCTAssertEqual(mid < 0, n % 2 == 1, "half swing \(n)")
        }
    }

    func testEnvelopeAndRestTimeOfOneKick() {
        let k = kicks([(0, right, 1)])
        XCTAssertEqual(spring.envelope(k, at: 0), 1.1651256487010526, accuracy: 1e-12)
        XCTAssertEqual(spring.envelope(k, at: 1), exp(-0.5235987755982989) / 0.8582765310461202, accuracy: 1e-12)
        XCTAssertEqual(spring.restTime(k), 7.7632953494736565, accuracy: 1e-9)
        let before = spring.reading(k, at: 7.76, preparedAt: 0)
        XCTAssertEqual(before.amplitude, 0.02 * exp(0.5235987755982989 * 0.0032953494736565), accuracy: 1e-9)
        let after = spring.reading(k, at: 7.7633, preparedAt: 0)
        XCTAssertEqual(after.amplitude, 0)
        XCTAssertEqual(after.swing, 0)
        XCTAssertEqual(after.direction, .zero)
        XCTAssertEqual(after.cycleStart, 0)
        // |s| <= E always: the envelope bounds the swing.
        for i in 0..<780 {
            let t = Double(i) * 0.01
            XCTAssertLessThanOrEqual(spring.swing(k, at: t).length, spring.envelope(k, at: t) + 1e-12)
        }
    }

    func testTwoKicksAddUp() {
        // 1 along x at 0, 0.5 along y at 0.5.
        let k = kicks([(0, right, 1), (0.5, Point(0, 1), 0.5)])
        XCTAssertEqual(k.count, 2)
        let s = spring.swing(k, at: 0.8)
        XCTAssertEqual(s.x, -0.655530909032524, accuracy: 1e-12)   // h(0.8)
        XCTAssertEqual(s.y, 0.4978637284307095, accuracy: 1e-12)   // 0.5·h(0.3)
        XCTAssertEqual(spring.envelope(k, at: 0.8), 1.2642799018095874, accuracy: 1e-12)
        // Rest: E(0.5) = (e^{−0.5Zω} + 0.5)/c = 1.4793197373644758, then
        // 0.5 + ln(E(0.5)/0.02)/(Zω).
        XCTAssertEqual(spring.restTime(k), 8.719280776020268, accuracy: 1e-9)
        let r = spring.reading(k, at: 0.8, preparedAt: 0)
        XCTAssertEqual(r.amplitude, 1.2642799018095874, accuracy: 1e-12)
        XCTAssertEqual(r.direction.x, -0.655530909032524 / s.length, accuracy: 1e-12)
        XCTAssertEqual(r.swing, -s.length / 1.2642799018095874, accuracy: 1e-12)
        XCTAssertEqual(r.level, 1.2642799018095874, accuracy: 1e-12)
        XCTAssertEqual(r.cycleStart, 0.5)
    }

    func testOppositeEqualKicksAtTheSameTimeCancel() {
        let k = kicks([(1, right, 1), (1, Point(-1, 0), 1)])
        XCTAssertEqual(k.count, 1)   // merged
        for i in 0..<100 {
            let t = 1 + Double(i) * 0.05
            XCTAssertEqual(spring.swing(k, at: t), .zero)
            XCTAssertEqual(spring.reading(k, at: t, preparedAt: 0).swing, 0)
        }
        // In a scene: no region moves in any frame.
        let scene = Scene()
        scene.imageSize = (100, 100)
        scene.addSketch(parameters: .spring)
        let m = scene.prepare()[0]
        try? scene.impulse(m, dx: 1, dy: 0)
        try? scene.impulse(m, dx: -1, dy: 0)
        try? scene.wait(2)
        let clip = try? scene.finish()
        XCTAssertEqual(clip?.frameCount, 60)
        for f in 0..<60 { XCTAssertTrue(clip?.frame(f).regions.isEmpty ?? false) }
    }

    func testUntilStillIsTheClosedFormRestTime() throws {
        let scene = Scene()
        scene.imageSize = (100, 100)
        scene.addSketch(parameters: .spring)
        let m = scene.prepare()[0]
        try scene.impulse(m, dx: 1, dy: 0)
        try scene.wait(0.5)
        try scene.impulse(m, dx: 0, dy: 1, amplitude: 0.5)
        XCTAssertTrue(try scene.untilStill())
        XCTAssertEqual(scene.now, 8.719280776020268, accuracy: 1e-9)
        XCTAssertEqual(m.state(at: scene.now).amplitude, 0)
        XCTAssertGreaterThan(m.state(at: scene.now - 1e-6).amplitude, 0.02 - 1e-6)
        // untilStill(max) stops early and says so.
        try scene.impulse(m, dx: 1, dy: 0)
        XCTAssertFalse(try scene.untilStill(maxSeconds: 1))
        XCTAssertEqual(scene.now, 9.719280776020268, accuracy: 1e-9)
        // A new kick after rest forgets the old ones.
        XCTAssertTrue(try scene.untilStill())
        try scene.impulse(m, dx: 0, dy: -1)
        XCTAssertEqual(m.kicks.count, 1)
        // Never rests without damping: an error naming the parameters.
        let z = Scene()
        z.imageSize = (100, 100)
        z.addSketch(parameters: WobbleParameters(motion: .spring, damping: 0))
        try z.impulse(z.prepare()[0], dx: 1, dy: 0)
        XCTAssertThrowsError(try z.untilStill()) { e in
            XCTAssertEqual("\(e)", "untilStill: a model never comes to rest (damping = 0 or threshold = 0): give maxSeconds")
        }
    }

    func testFramesAreAPureFunctionOfTime() throws {
        // The frame at t from a full run equals the reading at t: slices
        // (--frames) and --check see the same values.
        let scene = Scene()
        scene.imageSize = (100, 100)
        scene.addSketch(parameters: .spring)
        let m = scene.prepare()[0]
        try scene.impulse(m, dx: 3, dy: 4)
        try scene.wait(0.4)
        try scene.impulse(m, dx: -1, dy: 0, amplitude: 0.7)
        try scene.wait(1)
        let clip = try scene.finish()
        let shape = RegionShape(lt: Point(10, 10), rt: Point(100, 10), rb: Point(100, 100), lb: Point(10, 100),
                                center: Point(55, 55))
        for k in [3, 12, 13, 20, 41] {
            let t = Double(k) / 30
            let f = clip.frame(k)
            let r = spring.reading(m.kicks.array, at: t, preparedAt: 0)
            XCTAssertEqual(f.regions.count, 1)
            XCTAssertEqual(f.regions[0].peak, 0.08 * 90 * min(r.amplitude, 4), accuracy: 1e-12)
            XCTAssertEqual(f.regions[0].centerOffset.x, -0.08 * 90 * spring.swing(m.kicks.array, at: t).x, accuracy: 1e-9)
            XCTAssertEqual(f.regions[0].shape, shape)
        }
    }
}
