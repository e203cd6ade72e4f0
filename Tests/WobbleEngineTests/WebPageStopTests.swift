import Foundation
import XCTest
import WobbleCore
import WobbleMedia
import WobbleSystem
@testable import WobbleEngine

/// A stop (a signal, the studio's cancel) while a web page is being made
/// ends it with `Interrupted` and writes nothing: no page, no folder, no
/// temporary file (the page's picture search is most of its time, and it
/// once ran to the end and exited 0 after Ctrl+C).
final class WebPageStopTests: SessionTestCase {
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
}
