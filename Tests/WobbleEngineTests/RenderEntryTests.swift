import Foundation
import XCTest
import WobbleCore
import WobbleMedia
@testable import WobbleEngine

/// The one entry every front end renders through (`RenderEntry`): it picks
/// plain, preset or `--assemble` from the options alone, and a run's inputs
/// come back in its summary and its report (no global).
final class RenderEntryTests: SessionTestCase {
    static let scene = """
    image("img.png")
    fps(10)
    local r = addSketch{x = 4, y = 4, w = 24, h = 18, duration = 1}
    prepare()
    impulse(r, 1, 0.5)
    wait(0.6)
    """

    func options(_ scene: String) -> RenderOptions {
        var o = RenderOptions()
        o.scene = scene
        o.backend = .cpu
        o.quiet = true
        o.outputFolder = dir.path
        return o
    }

    func testAPlainRunGivesItsSummaryAndInputs() throws {
        let scene = try scene(Self.scene)
        var o = options(scene)
        o.output = dir.appendingPathComponent("plain.gif").path
        let report = RunReport(json: false)
        let result = try RenderEntry.run(o, report: report)
        let summary = try XCTUnwrap(result.summary)
        XCTAssertEqual(summary.frames, 6)
        XCTAssertEqual(result.okLine, "ok: 6 frames, 0.6 s at 10 fps, 40×30")
        XCTAssertEqual(summary.output, o.output)
        // The scene and the image it named, resolved, each once; the report has them too.
        XCTAssertEqual(result.inputs, [scene, dir.appendingPathComponent("img.png").path])
        XCTAssertEqual(report.inputs, result.inputs)
        XCTAssertEqual(try ImageIO.readFile(path: o.output!).prefix(6), Array("GIF89a".utf8)[...])
    }

    func testAFailedRunStillReportsWhatItRead() throws {
        let scene = try scene("image(\"img.png\")\nerror(\"boom\")\n")
        let report = RunReport(json: false)
        XCTAssertThrowsError(try RenderEntry.run(options(scene), report: report))
        XCTAssertEqual(report.inputs, [scene, dir.appendingPathComponent("img.png").path])
    }

    /// `--assemble` through the same entry: the frames a `--frames`-less
    /// PNG render wrote, joined into the GIF a direct render writes.
    func testAssembleGoesThroughTheEntryAndMatchesADirectRender() throws {
        let scene = try scene(Self.scene)
        var frames = options(scene)
        frames.output = dir.appendingPathComponent("frames").path + "/"
        _ = try RenderEntry.run(frames, report: RunReport(json: false))
        var direct = options(scene)
        direct.output = dir.appendingPathComponent("direct.gif").path
        _ = try RenderEntry.run(direct, report: RunReport(json: false))

        var assemble = RenderOptions()
        assemble.assemble = dir.appendingPathComponent("frames").path
        assemble.output = dir.appendingPathComponent("joined.gif").path
        assemble.quiet = true
        let report = RunReport(json: false)
        let result = try RenderEntry.run(assemble, report: report)
        XCTAssertNil(result.summary)
        XCTAssertEqual(result.okLine, "ok: 6 frames, 0.6 s at 10 fps, 40×30")
        XCTAssertEqual(report.frames, 6)
        XCTAssertEqual(try ImageIO.readFile(path: assemble.output!), try ImageIO.readFile(path: direct.output!))
    }

    /// A preset through the entry: the platform's search, the same bytes as
    /// the export the studio starts (`ExportJob`, which calls the entry).
    func testAPresetGoesThroughTheEntryAndAnExportWritesTheSameBytes() throws {
        let scene = try scene(Self.scene)
        var o = options(scene)
        o.preset = try Preset.named("slack")
        o.output = dir.appendingPathComponent("entry-slack.gif").path
        let result = try RenderEntry.run(o, report: RunReport(json: false))
        XCTAssertNotNil(result.summary)
        let entryBytes = try ImageIO.readFile(path: o.output!)
        XCTAssertLessThanOrEqual(entryBytes.count, o.preset!.byteLimit)

        var e = options(scene)
        e.preset = o.preset
        e.output = dir.appendingPathComponent("export-slack.gif").path
        let job = ExportJob(options: e)
        XCTAssertTrue(job.wait(seconds: 120))
        XCTAssertNil(job.outcome?.error)
        XCTAssertEqual(try ImageIO.readFile(path: e.output!), entryBytes)
    }
}
