import Foundation
import XCTest
import WobbleCore
import WobbleEngine
import WobbleTestSupport
@testable import WobbleStudioCore
import WobbleSystem

/// `Shift+E`'s last row, "web page": the scene as a live web page,
/// `<scene>.html` beside the scene, in the background as every export.
final class WebPageExportTests: StudioCoreTestCase {
    /// The row is the chooser's last; its number chooses it; the page is
    /// what `wobble-run s.lua -o x.html` writes, byte for byte, whatever
    /// the script's `output(...)` names.
    func testTheWebPageRowWritesTheScenesPage() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 160, height: 120, checker: 5))
        try box.write("s.lua", """
        image("img.png")
        output("clip.gif")
        local a = addSketch{x = 20, y = 15, w = 110, h = 90}
        prepare()
        touch(70, 60, 90, 60)
        wait(0.6)

        """)
        let core = startedCore()
        core.perform(.openExportChooser)
        let n = PresetChooser.choices.count
        XCTAssertEqual(PresetChooser.choices.last, .webPage)
        XCTAssertEqual(core.message, "export with: Up/Down and Enter, or 1-\(n); Esc cancels")
        let rows = try XCTUnwrap(core.snapshot().chooserChoices)
        XCTAssertEqual(rows.count, n)
        XCTAssertTrue(rows.last?.hasPrefix("web page  HTML ") ?? false, rows.last ?? "")
        let chosen = StudioKeyMap.commands(text: "\(n)", renaming: false, choosing: true)
        XCTAssertEqual(chosen, [.chooserChoose(n - 1)])
        for c in chosen { core.perform(c) }
        XCTAssertNil(core.snapshot().chooserChoices, "the chooser closed")
        XCTAssertEqual(core.message, "exporting s.lua as a web page...")
        XCTAssertTrue(core.exporter.waitForExport(upTo: 300), "the export did not end")
        clock.t += 0.01
        core.tick()
        XCTAssertFalse(core.messageIsError, core.message)
        XCTAssertTrue(core.message.hasPrefix("exported in "), core.message)
        XCTAssertEqual(core.exporter.lastOutput.map { ScenePaths.name($0) }, "s.html")
        core.finish()
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("clip.gif")), "no GIF: the page instead")
        let r = try Tool.run(["s.lua", "-q", "-o", "cli.html"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        let page = try Data(contentsOf: URL(fileURLWithPath: box.path("s.html")))
        XCTAssertTrue(String(decoding: page, as: UTF8.self).contains("<wobble-view src=\"#wobble-scene\">"))
        XCTAssertEqual(page, try Data(contentsOf: URL(fileURLWithPath: box.path("cli.html"))),
                       "the studio's page and the command line's, byte for byte")
    }
}
