import Foundation
import XCTest
import WobbleCore
import WobbleEngine
import WobbleSystem
import WobbleTestSupport
@testable import WobbleStudioCore

/// A third motion model, declared here and nowhere else: a bounce, whose
/// kick lands and bounces `duration` apart, each bounce `bounciness` times
/// as high as the one before, at rest once below `threshold`. Its own
/// parameter (`bounciness`) has no field anywhere: the declaration's
/// table is all the binding, the inspector, the source writer and loops see.
struct BounceMotion: MotionModel {
    let parameters: WobbleParameters

    static let bounciness = MotionParameter(
        key: "bounciness", accepted: ParameterRange(0, 1), valid: 0...1, step: 0.05, defaultValue: 0.6,
        loopNeeds: ({ $0 < 1 }, "a bounce with bounciness = 1 never settles into a loop (give it bounciness < 1)"))

    static let declaration = MotionDeclaration(name: "bounce", parameters: [
        .duration(default: 0.25),
        .strength(default: 0.1),
        bounciness,
        .threshold(default: 0.05),
    ], make: { BounceMotion(parameters: $0) })

    var b: Double { BounceMotion.bounciness.get(parameters) }

    /// How many bounces an amplitude `a` makes before it rests.
    func bounces(_ a: Double) -> Double {
        guard a > parameters.threshold else { return 0 }
        if b >= 1 { return .infinity }
        if b <= 0 { return 1 }
        return (log(parameters.threshold / a) / log(b)).rounded(.up)
    }

    /// The reading `tau` seconds after `kick`.
    func reading(_ kick: Impulse, tau: Double) -> MotionReading {
        let n = (tau / parameters.duration).rounded(.down)
        guard n < bounces(kick.amplitude) else { return .still(direction: kick.direction, cycleStart: kick.start) }
        let a = kick.amplitude * pow(b, n)
        let swing = abs(sin(Double.pi * (tau / parameters.duration - n)))
        return MotionReading(amplitude: a, direction: kick.direction, cycleStart: kick.start, level: a, swing: swing,
                             offsetDirection: kick.direction)
    }

    func adding(_ kick: Impulse, to kicks: [Impulse]) -> [Impulse] { [kick] }

    func reading(_ kicks: [Impulse], at t: Double, preparedAt: Double) -> MotionReading {
        guard let last = kicks.last else { return .still(direction: .zero, cycleStart: preparedAt) }
        return reading(last, tau: t - last.start)
    }

    func restTime(_ kicks: [Impulse]) -> Double {
        guard let last = kicks.last else { return -.infinity }
        return last.start + bounces(last.amplitude) * parameters.duration
    }

    var neverRests: String { "bounciness = 1 or threshold = 0" }

    struct Loop: SteadyLoop {
        let model: BounceMotion
        let kicks: [Impulse]
        /// The latest kick decides.
        func reading(at t: Double, taus: [Double]) -> MotionReading {
            guard let i = taus.indices.min(by: { taus[$0] < taus[$1] }) else { return .still(direction: .zero, cycleStart: 0) }
            return model.reading(kicks[i], tau: taus[i])
        }
    }

    func looped(period: Double, kicks: [Impulse]) -> any SteadyLoop { Loop(model: self, kicks: kicks) }
}

final class ThirdMotionModelTests: StudioCoreTestCase {
    /// The standard models and the bounce.
    let motions = MotionCatalog.standard.adding(BounceMotion.declaration)

    override func setUpWithError() throws {
        try super.setUpWithError()
        try box.writeImage("img.png", Sandbox.pattern(width: 200, height: 150))
    }

    func options(_ text: String, motions: MotionCatalog? = nil) throws -> SessionOptions {
        try box.write("s.lua", text)
        var o = SessionOptions(scenePath: box.path("s.lua"))
        o.backend = .cpu
        o.motions = motions ?? self.motions
        return o
    }

    static let scene = """
    image("img.png")
    local b = addSketch{x = 10, y = 10, w = 40, h = 40, motion = "bounce", bounciness = 0.5}
    prepare()
    impulse(b, 1, 0)
    wait(0.5)

    """

    /// The Lua binding reads the bounce and its own key from a scene run
    /// with the catalog (and only then), handles read and assign it, and
    /// the clip moves as the bounce's reading says.
    func testTheBindingReadsTheThirdModel() throws {
        let s = LiveSession(options: try options(Self.scene.replacingOccurrences(of: "prepare()", with: "b.bounciness = b.bounciness - 0.1\nprepare()")))
        XCTAssertTrue(s.run(), s.error?.description ?? "")
        let p = try XCTUnwrap(s.clip?.timeline.snapshot(at: 0.1).models.first?.parameters)
        XCTAssertEqual(p.motion.rawValue, "bounce")
        XCTAssertEqual(p.motion.declaration.parameters.map(\.key), ["duration", "strength", "bounciness", "threshold"])
        XCTAssertEqual(BounceMotion.bounciness.get(p), 0.4, accuracy: 1e-12, "the handle read and assigned it")
        XCTAssertEqual(p.duration, 0.25, "the bounce's own default")
        // The second bounce (0.25 s to 0.5 s after the kick) is 0.4 times as high as the first.
        let f = try XCTUnwrap(s.clip?.frame(3).regions.first)   // 0.1 s
        let g = try XCTUnwrap(s.clip?.frame(11).regions.first)  // 0.3667 s
        let reading = BounceMotion(parameters: p).reading([Impulse(start: 0, direction: Point(1, 0), amplitude: 1)], at: 11.0 / 30, preparedAt: 0)
        XCTAssertEqual(g.swing, reading.swing, accuracy: 1e-9)
        XCTAssertEqual(g.peak / f.peak, 0.4, accuracy: 1e-9)

        // Without the bounce in the catalog, the scene cannot name it.
        let plain = LiveSession(options: try options(Self.scene.replacingOccurrences(of: ", bounciness = 0.5", with: ""), motions: .standard))
        XCTAssertFalse(plain.run())
        XCTAssertEqual(plain.error?.message, box.path("s.lua") + ":2: addSketch: motion must be \"classic\" or \"spring\" (got \"bounce\")")
        // Its key belongs to it alone.
        let wrong = LiveSession(options: try options("image(\"img.png\")\naddSketch{motion = \"spring\", bounciness = 0.5}\n"))
        XCTAssertFalse(wrong.run())
        XCTAssertEqual(wrong.error?.message,
                       box.path("s.lua") + ":2: addSketch: bounciness applies to motion = \"bounce\" only (this sketch's motion is \"spring\")")
        let out = LiveSession(options: try options(Self.scene.replacingOccurrences(of: "0.5}", with: "1.5}")))
        XCTAssertFalse(out.run())
        XCTAssertEqual(out.error?.message, box.path("s.lua") + ":2: addSketch: bounciness must be a number in [0, 1]")
    }

    /// The inspector lists and edits the bounce's rows, offers it as a
    /// model, and a save writes it back as Lua that runs to the same sketch.
    func testTheInspectorAndTheSourceWriterTakeTheThirdModel() throws {
        let core = StudioCore(session: try options(Self.scene), verbose: false, clock: clock,
                              audio: { throw AudioUnavailable(description: "no audio device in the tests") })
        core.start()
        settle(core)
        XCTAssertNil(core.session.error)
        core.inspector.select(.call(0))
        let rows = try XCTUnwrap(core.snapshot().inspector?.rows)
        XCTAssertEqual(rows.map(\.key), ["name", "motion", "duration", "strength", "bounciness", "threshold", "pin"])
        XCTAssertEqual(rows[1].text, "bounce")
        XCTAssertEqual(rows[1].choices, ["classic", "spring", "bounce"])
        XCTAssertEqual(rows[4].value, 0.5)
        core.perform(.setParameter(key: "bounciness", value: 0.75))
        XCTAssertFalse(core.messageIsError, core.message)
        XCTAssertEqual(core.snapshot().inspector?.rows[4].value, 0.75)

        // A region added and made a bounce by name, its key stepped by the keys.
        core.perform(.add(at: Point(120, 80)))
        settle(core)
        core.perform(.setMotion("bounce"))
        XCTAssertEqual(core.session.currentState(.added(0))?.parameters.motion.rawValue, "bounce")
        XCTAssertEqual(core.snapshot().inspector?.rows.map(\.key), ["name", "motion", "duration", "strength", "bounciness", "threshold", "pin"])
        XCTAssertEqual(core.snapshot().inspector?.rows[2].value, 0.25, "the bounce's duration: the classic default followed the model")
        core.inspector.focus(by: 4)
        core.inspector.step(-2)
        let added = try XCTUnwrap(core.session.currentState(.added(0))?.parameters)
        XCTAssertEqual(BounceMotion.bounciness.get(added), 0.5, accuracy: 1e-9)
        core.perform(.setMotion("jelly"))
        XCTAssertTrue(core.messageIsError)
        XCTAssertEqual(core.message, "no motion 'jelly' (\"classic\", \"spring\" or \"bounce\")")

        core.perform(.save)
        settle(core)
        let text = try String(contentsOfFile: box.path("s.lua"), encoding: .utf8)
        XCTAssertTrue(text.contains("local b = addSketch{x = 10, y = 10, w = 40, h = 40, motion = \"bounce\", bounciness = 0.75}\n"), text)
        XCTAssertTrue(text.contains("local region1 = addSketch{x = 75, y = 35, w = 90, h = 90, motion = \"bounce\", bounciness = 0.5}\n"), text)
        // The saved scene runs to the same sketches.
        let again = LiveSession(options: try options(text))
        XCTAssertTrue(again.run(), again.error?.description ?? "")
        let models = try XCTUnwrap(again.clip?.timeline.snapshot(at: 0.1).models)
        XCTAssertEqual(models.map { BounceMotion.bounciness.get($0.parameters) }, [0.75, 0.5])

        // Back to the classic model: the bounce's key goes from the text, the model's name stays.
        core.inspector.select(.call(0))
        core.perform(.setMotion("classic"))
        core.perform(.save)
        settle(core)
        let classic = try String(contentsOfFile: box.path("s.lua"), encoding: .utf8)
        XCTAssertTrue(classic.contains("local b = addSketch{x = 10, y = 10, w = 40, h = 40, motion = \"classic\"}\n"), classic)
    }

    /// A looping scene plays the bounce's steady state (frame N is frame
    /// 0), and the bounce's table says what a loop needs of it.
    func testALoopTakesTheThirdModel() throws {
        let loop = """
        image("img.png")
        loop()
        local b = addSketch{x = 10, y = 10, w = 40, h = 40, motion = "bounce", bounciness = 0.5, duration = 0.2}
        prepare()
        wait(0.3)
        impulse(b, 1, 0)
        wait(0.7)

        """
        let s = LiveSession(options: try options(loop))
        XCTAssertTrue(s.run(), s.error?.description ?? "")
        let clip = try XCTUnwrap(s.clip)
        XCTAssertEqual(clip.loop?.models.first?.parameters.motion.rawValue, "bounce")
        XCTAssertEqual(clip.frameCount, 30)
        XCTAssertEqual(clip.frame(30).regions, clip.frame(0).regions, "the frame after the last is frame 0")
        // 0.133 s into the period is 0.833 s after the kick of the period
        // before: its fifth bounce, 1/16 as high as the first (0.1 s after the kick).
        let r = try XCTUnwrap(clip.frame(4).regions.first), first = try XCTUnwrap(clip.frame(12).regions.first)
        XCTAssertEqual(r.peak / first.peak, 1.0 / 16, accuracy: 1e-9)

        let never = LiveSession(options: try options(loop.replacingOccurrences(of: "bounciness = 0.5", with: "bounciness = 1")))
        XCTAssertFalse(never.run())
        XCTAssertTrue(never.error?.message.contains("a bounce with bounciness = 1 never settles into a loop (give it bounciness < 1)") ?? false,
                      never.error?.message ?? "")
    }
}
