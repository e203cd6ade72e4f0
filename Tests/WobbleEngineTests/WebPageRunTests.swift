import Foundation
import XCTest
import WobbleCore
import WobbleMedia
import WobbleSystem
@testable import WobbleEngine

/// A web page made by a run: a stop (a signal, the studio's cancel) while
/// it is being made ends it with `Interrupted` and writes nothing (no page,
/// no folder, no temporary file: the page's picture search is most of its
/// time, and it once ran to the end and exited 0 after Ctrl+C); the
/// options a page cannot follow are said, the size it can is kept.
final class WebPageRunTests: SessionTestCase {
    func testAStopBeforeThePageIsWholeWritesNothing() throws {
        let scene = try scene(RenderEntryTests.scene)
        var o = RenderOptions()
        o.scene = scene
        o.quiet = true
        o.outputFolder = dir.path
        o.output = dir.appendingPathComponent("live.html").path
        let summary = try XCTUnwrap(try RenderEntry.run(o, report: RunReport(json: false)).summary)
        let source = try ImageIO.load(path: dir.appendingPathComponent("img.png").path)
        let page = dir.appendingPathComponent("stopped.html").path

        let stopped = RunControl()
        stopped.cancel()
        let before = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        XCTAssertThrowsError(try WebPage.writePage(clip: summary.clip, source: source, title: "scene", quality: nil,
                                                   to: page, name: .given, control: stopped)) {
            XCTAssertEqual(($0 as? Interrupted)?.signal, SIGTERM)
        }
        let folder = dir.appendingPathComponent("site").path
        XCTAssertThrowsError(try WebPage.writeFolder(clip: summary.clip, source: source, title: "scene", quality: 90,
                                                     to: folder, control: stopped)) {
            XCTAssertEqual(($0 as? Interrupted)?.signal, SIGTERM)
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted(), before)

        // Not stopped: the same call writes the page the run wrote.
        try WebPage.writePage(clip: summary.clip, source: source, title: "scene", quality: nil,
                              to: page, name: .given, control: RunControl())
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: page)),
                       try Data(contentsOf: URL(fileURLWithPath: o.output!)))
        try WebPage.writeFolder(clip: summary.clip, source: source, title: "scene", quality: 90, to: folder, control: RunControl())
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder).sorted(),
                       ["index.html", "picture.webp", "scene.json", "wobble-view.js"])
    }

    /// `--width` is the size the page shows the clip at (the picture inside
    /// stays whole); `--frames` and `--loop` are said to be left out (they
    /// were dropped without a word).
    func testThePageIsShownAtTheOutputsWidthAndSaysWhatItLeavesOut() throws {
        let scene = try scene(RenderEntryTests.scene)
        var o = RenderOptions()
        o.scene = scene
        o.quiet = true
        o.outputFolder = dir.path
        o.output = dir.appendingPathComponent("small.html").path
        o.width = 20
        o.frames = 1...3
        o.loop = 2
        o.loopGiven = true
        let report = RunReport(json: false)
        _ = try RenderEntry.run(o, report: report)
        let small = String(decoding: try Data(contentsOf: URL(fileURLWithPath: o.output!)), as: UTF8.self)
        XCTAssertTrue(small.contains("wobble-view{width:20px;max-width:100vw}"), small.prefix(600).description)
        XCTAssertEqual(report.warnings, ["a web page plays the whole scene: --frames 1-3 is left out",
                                         "a web page loops as the scene does (loop=\"false\" on <wobble-view> plays it once): --loop is left out"])
        var plain = o
        plain.output = dir.appendingPathComponent("plain.html").path
        plain.width = nil
        plain.frames = nil
        plain.loop = 0
        plain.loopGiven = false
        let quiet = RunReport(json: false)
        _ = try RenderEntry.run(plain, report: quiet)
        XCTAssertEqual(quiet.warnings, [])
        let whole = String(decoding: try Data(contentsOf: URL(fileURLWithPath: plain.output!)), as: UTF8.self)
        XCTAssertTrue(whole.contains("wobble-view{width:40px;max-width:100vw}"))
        // Only the shown width differs: the same picture and scene inside.
        XCTAssertEqual(small.replacingOccurrences(of: "width:20px", with: "width:40px"), whole)
    }
}
