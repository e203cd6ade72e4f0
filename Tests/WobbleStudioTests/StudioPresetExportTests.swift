import Foundation
import XCTest
import WobbleCore
import WobbleEngine
import WobbleMedia
import WobbleTestSupport
@testable import WobbleStudio
@testable import WobbleStudioCore
import WobbleSystem

private func key(_ k: StudioKey, shift: Bool = false, ctrl: Bool = false) -> StudioInput {
    .key(k, shift: shift, ctrl: ctrl)
}

/// `Shift+E`, in-process: the chooser over the window, the export with the
/// chosen platform's preset in the background, and its result said against
/// the platform's limits.
final class StudioPresetExportTests: InProcessStudioCase {
    /// Frame `k` of what the surface was last given before `t`.
    func shown(_ surface: FakeSurface, before t: Double) -> RGBAImage? {
        surface.frames.last { $0.at < t && $0.image != nil }?.image
    }

    /// Down three times and Enter: Discord; the file is what
    /// `wobble-run s.lua --preset discord` writes, and the status line says
    /// its size of the 512 KB limit, its frame and length.
    func testShiftEExportsWithTheChosenPresetAndSaysItAgainstTheLimits() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        try box.write("s.lua", StudioFinishTests.starter)
        let clock = ManualClock()
        let t0 = clock.t
        var opened: String?, during: String?
        let (status, surface, app) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.05, key(.e, shift: true)),
            (t0 + 0.10, key(.down)), (t0 + 0.12, key(.down)), (t0 + 0.14, key(.down)),
            (t0 + 0.30, key(.enter)),
            (t0 + 1.0, .quit),
        ]) { surface, app in
            surface.actions = [
                (t0 + 0.06, { opened = app.message }),
                (t0 + 0.31, {
                    during = app.message
                    surface.holdWhile = { app.isExporting }
                }),
            ]
        }
        XCTAssertEqual(status, 0)
        XCTAssertEqual(opened, "export with: Up/Down and Enter, or 1-\(PresetChooser.choices.count); Esc cancels")
        XCTAssertTrue(during?.hasPrefix("exporting discord") ?? false, during ?? "")
        // The chooser covered the window, the fourth row (Discord) lit.
        let sheet = try XCTUnwrap(shown(surface, before: t0 + 0.3))
        if let out = ProcessInfo.processInfo.environment["WOBBLE_CHOOSER_PICTURE"] { try ImageIO.writePNG(sheet, to: out) }
        var discord = PresetChooser()
        discord.row = 3
        let drawn = discord.image(width: sheet.width, height: sheet.height, loopPeriod: nil, clipSeconds: app.session.scriptedDuration)
        XCTAssertEqual(sheet, drawn, "the chooser, Discord's row lit")
        XCTAssertNotEqual(sheet, PresetChooser().image(width: sheet.width, height: sheet.height, loopPeriod: nil, clipSeconds: app.session.scriptedDuration))
        XCTAssertTrue(sheet.pixels.count > 0 && Set(stride(from: 0, to: sheet.pixels.count, by: 4).map { sheet.pixels[$0 + 2] }).contains(150), "a row is lit")
        // The file, and the line against Discord's limits.
        let path = box.path("s-discord.png")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertLessThanOrEqual(bytes.count, 512 * 1024)
        let r = try Tool.run(["s.lua", "--backend", "cpu", "--preset", "discord", "-q", "--json", "-o", "ref.png"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(bytes, try Data(contentsOf: box.url.appendingPathComponent("ref.png")), "what the command line writes, byte for byte")
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let seconds = try XCTUnwrap(json["duration"] as? Double)
        XCTAssertTrue(app.message.hasPrefix("discord: \(PresetRun.kb(bytes.count)) of 512 KB, 320x320, \(fmt1(seconds)) s -> s-discord.png, in "), app.message)
        XCTAssertFalse(app.messageIsError, app.message)
    }

    /// A looping scene with LINE (row 5, typed): one period is written,
    /// and its length is said against LINE's 4 s.
    func testALoopingSceneExportsOnePeriodAndSaysTheTimeLimit() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        try box.write("s.lua", """
        image("img.png")
        fps(10)
        loop()
        local region = addSketch{x = 10, y = 10, w = 100, h = 70, duration = 0.6}
        prepare()
        touch(60, 45, 80, 45)
        wait(1.5)

        """)
        let clock = ManualClock()
        let t0 = clock.t
        let (status, _, app) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.05, key(.e, shift: true)),
            (t0 + 0.10, key(.other)), (t0 + 0.11, .text("5")),
            (t0 + 1.0, .quit),
        ]) { surface, app in
            surface.actions = [(t0 + 0.12, { surface.holdWhile = { app.isExporting } })]
        }
        XCTAssertEqual(status, 0)
        let bytes = try Data(contentsOf: box.url.appendingPathComponent("s-line.png"))
        XCTAssertTrue(app.message.hasPrefix("line: \(PresetRun.kb(bytes.count)) of 300 KB, 320x240, 1.5 s of 4 s -> s-line.png, in "), app.message)
        XCTAssertFalse(app.messageIsError, app.message)
        let frames = try APNGFrames.count(Array(bytes))
        XCTAssertEqual(frames, 15, "one period: 1.5 s at 10 fps")
    }

    /// Esc closes the chooser without exporting (and without quitting).
    func testEscClosesTheChooserWithoutExporting() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        try box.write("s.lua", StudioFinishTests.starter)
        let clock = ManualClock()
        let t0 = clock.t
        let (status, _, app) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.05, key(.e, shift: true)),
            (t0 + 0.10, key(.escape)),
            (t0 + 0.30, .quit),
        ])
        XCTAssertEqual(status, 0)
        XCTAssertEqual(app.message, "export cancelled")
        XCTAssertFalse(app.isExporting)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: box.url.path).sorted(), ["img.png", "s.lua"])
    }
}

/// The frame count of an APNG (its `acTL` chunk).
enum APNGFrames {
    struct NotAPNG: Error {}
    static func count(_ b: [UInt8]) throws -> Int {
        var i = 8
        while i + 8 <= b.count {
            let n = Int(b[i]) << 24 | Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3])
            if b[(i + 4)..<(i + 8)].elementsEqual("acTL".utf8), i + 12 <= b.count {
                return Int(b[i + 8]) << 24 | Int(b[i + 9]) << 16 | Int(b[i + 10]) << 8 | Int(b[i + 11])
            }
            i += 12 + n
        }
        throw NotAPNG()
    }
}
