import Foundation
import XCTest
import WobbleCore
import WobbleEngine
import WobbleTestSupport
@testable import WobbleStudioCore
import WobbleSystem

/// What a save removes after `Delete` on a cut region, in the studio core
/// on a manual clock: a mask another region names however it spells the
/// path stays; nothing is removed through a masks folder that is a link,
/// nor a link at the mask's name, nor what the system refuses to remove,
/// and the status says so; a region whose recut was saved leaves nothing
/// behind.
final class StudioDeleteRegionMaskTests: StudioCoreTestCase {
    typealias Pic = StudioDeleteRegionTests

    func makeCore(_ text: String, masks: String? = "s-masks", before: () throws -> Void = {}) throws -> StudioCore {
        try box.writeImage("img.png", Sandbox.pattern(width: Pic.w, height: Pic.h, checker: 5))
        if let masks {
            try FileManager.default.createDirectory(atPath: box.path(masks), withIntermediateDirectories: true)
            try box.writeImage("\(masks)/disc.png", Pic.discMask)
            try box.write("\(masks)/disc.strokes", CutoutStrokesFile.text([CutoutStroke(points: [Point(100, 75), Point(104, 75)], radius: 6, object: true)]))
        }
        try box.write("s.lua", text)
        try before()
        let core = startedCore()
        XCTAssertNil(core.session.error.map { "\($0)" })
        return core
    }

    /// Selects the region under `p`, deletes it and saves.
    func deleteAndSave(_ core: StudioCore, _ p: Point) {
        core.perform(.select(at: p, radius: 10))
        XCTAssertNotNil(core.inspector.selected)
        core.perform(.deleteSelected)
        settle(core)
        XCTAssertEqual(core.session.edits.deleted.count, 1, core.message)
        core.perform(.save)
        settle(core)
    }

    /// The twin names the disc's mask as `./s-masks/disc.png`, absolute, or
    /// `s-masks//disc.png`: the disc deleted and saved, the mask and its
    /// strokes stay, and the saved scene runs.
    func testAMaskAnotherRegionNamesUnderAnotherSpellingStays() throws {
        for spelling in ["./s-masks/disc.png", box.path("s-masks/disc.png"), "s-masks//disc.png", "s-masks/../s-masks/disc.png"] {
            let text = """
            image("img.png")
            local disc = addSketch{x = 65, y = 40, w = 70, h = 70, cutout = "s-masks/disc.png"}
            local twin = addSketch{x = 60, y = 35, w = 80, h = 80, cutout = "\(spelling)"}
            prepare()
            wait(0.5)

            """
            let core = try makeCore(text)
            deleteAndSave(core, Point(100, 46))
            XCTAssertEqual(core.message, "saved s.lua: 1 deleted", spelling)
            XCTAssertEqual(try box.list("s-masks"), ["disc.png", "disc.strokes"], "the twin names the mask still (\(spelling))")
            XCTAssertNil(core.session.error.map { "\($0)" }, "the saved scene runs (\(spelling))")
            XCTAssertEqual(core.session.handleShapes(atFrame: 0).count, 1)
            core.finish()
        }
    }

    /// A region spelling its own mask `./s-masks/disc.png` is the studio's
    /// mask all the same: deleted and saved, the mask and strokes go.
    func testARegionsOwnMaskUnderAnotherSpellingIsRemoved() throws {
        let core = try makeCore("""
        image("img.png")
        local disc = addSketch{x = 65, y = 40, w = 70, h = 70, cutout = "./s-masks/disc.png"}
        prepare()
        wait(0.5)

        """)
        deleteAndSave(core, Point(100, 46))
        XCTAssertEqual(core.message, "saved s.lua: 1 deleted, disc.png removed from s-masks")
        XCTAssertEqual(try box.list("s-masks"), [])
        core.finish()
    }

    /// `s-masks` a link to another folder: the line goes, nothing in the
    /// folder it leads to is removed, and the status says why.
    func testNothingIsRemovedThroughALinkedMasksFolder() throws {
        let core = try makeCore("""
        image("img.png")
        local disc = addSketch{x = 65, y = 40, w = 70, h = 70, cutout = "s-masks/disc.png"}
        prepare()
        wait(0.5)

        """, masks: "victim") {
            try FileManager.default.createSymbolicLink(atPath: self.box.path("s-masks"), withDestinationPath: "victim")
        }
        deleteAndSave(core, Point(100, 46))
        XCTAssertEqual(core.message, "saved s.lua: 1 deleted, disc.png left: s-masks is a symbolic link (nothing is removed through it)")
        XCTAssertEqual(try box.list("victim"), ["disc.png", "disc.strokes"])
        XCTAssertFalse(try String(contentsOfFile: box.path("s.lua"), encoding: .utf8).contains("local disc"))
        core.finish()
    }

    /// The mask a link to a file elsewhere: the link is left as it is (and
    /// what it leads to); the status says so and does not say removed.
    func testALinkAtTheMasksNameIsLeftAndSaidSo() throws {
        let core = try makeCore("""
        image("img.png")
        local disc = addSketch{x = 65, y = 40, w = 70, h = 70, cutout = "s-masks/lnk.png"}
        prepare()
        wait(0.5)

        """) {
            try FileManager.default.createDirectory(atPath: self.box.path("elsewhere"), withIntermediateDirectories: true)
            try FileManager.default.moveItem(atPath: self.box.path("s-masks/disc.png"), toPath: self.box.path("elsewhere/own.png"))
            try FileManager.default.createSymbolicLink(atPath: self.box.path("s-masks/lnk.png"), withDestinationPath: "../elsewhere/own.png")
        }
        deleteAndSave(core, Point(100, 46))
        XCTAssertEqual(core.message, "saved s.lua: 1 deleted, lnk.png left: a symbolic link")
        XCTAssertEqual(try box.list("s-masks"), ["disc.strokes", "lnk.png"])
        XCTAssertEqual(try box.list("elsewhere"), ["own.png"])
        core.finish()
    }

    /// A masks folder the studio may not change (no write permission): the
    /// line goes, the mask stays, and the status says it was not removed.
    func testAMaskTheSystemWillNotRemoveIsNotSaidRemoved() throws {
        try XCTSkipIf(getuid() == 0, "root removes files from a read-only folder")
        let core = try makeCore("""
        image("img.png")
        local disc = addSketch{x = 65, y = 40, w = 70, h = 70, cutout = "s-masks/disc.png"}
        prepare()
        wait(0.5)

        """)
        XCTAssertEqual(chmod(box.path("s-masks"), 0o555), 0)
        defer { chmod(box.path("s-masks"), 0o755) }
        deleteAndSave(core, Point(100, 46))
        XCTAssertEqual(core.message, "saved s.lua: 1 deleted, disc.png not removed: Permission denied")
        XCTAssertEqual(try box.list("s-masks"), ["disc.png", "disc.strokes"])
        core.finish()
    }

    /// A region cut out by a stroke and saved (its mask and strokes
    /// written), then deleted and saved: its mask and strokes go too.
    func testARegionWhoseStrokeCutWasSavedLeavesNoMaskWhenDeleted() throws {
        let img = Pic.discPicture
        let core = try makeCore("""
        image("img.png")
        local disc = addSketch{x = 65, y = 40, w = 70, h = 70}
        local bar = addSketch{x = 150, y = 20, w = 40, h = 100}
        prepare()
        wait(0.5)

        """, masks: nil) { try self.box.writeImage("img.png", img) }
        core.perform(.select(at: Point(100, 46), radius: 10))
        core.perform(.strokeBegin(at: Point(100.5, 75.5), radius: 6, object: true))
        core.perform(.strokeTo(Point(104.5, 75.5)))
        core.perform(.strokeEnd)
        XCTAssertTrue(core.cutouts.waitForJob(upTo: 60))
        settle(core)
        core.perform(.save)
        settle(core)
        XCTAssertEqual(core.message, "saved s.lua: 1 sketch edited, disc.png written in s-masks")
        XCTAssertEqual(try box.list("s-masks"), ["disc.png", "disc.strokes"])

        deleteAndSave(core, Point(100, 46))
        XCTAssertEqual(core.message, "saved s.lua: 1 deleted, disc.png removed from s-masks")
        XCTAssertEqual(try box.list("s-masks"), [])
        core.finish()
    }

    /// A region added by a stroke and saved, stroked again and saved (its
    /// mask replaced), then deleted and saved: its mask and strokes go too.
    func testAnAddedRegionRecutAndSavedLeavesNoMaskWhenDeleted() throws {
        let img = Pic.discPicture
        let core = try makeCore("""
        image("img.png")
        local bar = addSketch{x = 150, y = 20, w = 40, h = 100}
        prepare()
        wait(0.5)

        """, masks: nil) { try self.box.writeImage("img.png", img) }
        func stroke(_ p: Point, moved: Bool = true) {
            core.perform(.strokeBegin(at: p, radius: 6, object: true))
            if moved { core.perform(.strokeTo(Point(p.x + 4, p.y))) }
            core.perform(.strokeEnd)
            for _ in 0..<3 {
                XCTAssertTrue(core.cutouts.waitForJob(upTo: 60))
                settle(core)
            }
        }
        stroke(Point(100.5, 75.5), moved: false)   // a Shift+click: a region fitted around the disc
        core.perform(.save)
        settle(core)
        XCTAssertEqual(core.message, "saved s.lua: 1 added, region1.png written in s-masks")
        core.perform(.select(at: Point(100, 75), radius: 10))
        XCTAssertEqual(core.inspector.selected, .call(1))
        stroke(Point(90.5, 70.5))
        core.perform(.save)
        settle(core)
        XCTAssertEqual(core.message, "saved s.lua: 1 sketch edited, region1.png written in s-masks")
        XCTAssertEqual(try box.list("s-masks"), ["region1.png", "region1.strokes"])

        deleteAndSave(core, Point(100, 75))
        XCTAssertEqual(core.message, "saved s.lua: 1 deleted, region1.png removed from s-masks")
        XCTAssertEqual(try box.list("s-masks"), [])
        core.finish()
    }

    /// A region recut and saved (its mask replaced, its strokes written),
    /// then deleted and saved: its mask and strokes go too.
    func testARegionWhoseRecutWasSavedLeavesNoMaskWhenDeleted() throws {
        let img = Pic.discPicture
        let core = try makeCore("""
        image("img.png")
        local disc = addSketch{x = 65, y = 40, w = 70, h = 70, cutout = "s-masks/disc.png"}
        local bar = addSketch{x = 150, y = 20, w = 40, h = 100}
        prepare()
        wait(0.5)

        """) { try self.box.writeImage("img.png", img) }
        core.perform(.grab(at: Point(135, 40), radius: 10))
        core.perform(.dragTo(Point(100, 40)))
        core.perform(.dragEnd)
        XCTAssertTrue(core.cutouts.waitForJob(upTo: 60))
        settle(core)
        core.perform(.save)
        settle(core)
        XCTAssertEqual(core.message, "saved s.lua: 1 sketch edited, disc.png written in s-masks")
        XCTAssertEqual(try box.list("s-masks"), ["disc.png", "disc.strokes"])

        deleteAndSave(core, Point(80, 46))
        XCTAssertEqual(core.message, "saved s.lua: 1 deleted, disc.png removed from s-masks")
        XCTAssertEqual(try box.list("s-masks"), [])
        core.finish()
    }

    /// A scene file that starts with a UTF-8 byte order mark, or with a
    /// `#!` line, runs (Lua's file loader skips them) and is saved: a
    /// region deleted and another moved, the file keeps its first bytes.
    func testASceneStartingWithAByteOrderMarkOrAShebangIsSaved() throws {
        for start in ["\u{FEFF}", "#!/usr/bin/env wobble-run\n", "\u{FEFF}#!/usr/bin/env wobble-run\n"] {
            let text = start + """
            image("img.png")
            local disc = addSketch{x = 65, y = 40, w = 70, h = 70}
            local bar = addSketch{x = 150, y = 20, w = 40, h = 100}
            prepare()
            wait(0.5)

            """
            let core = try makeCore(text, masks: nil)
            core.perform(.select(at: Point(100, 46), radius: 10))
            core.perform(.deleteSelected)
            settle(core)
            core.perform(.grab(at: Point(190, 20), radius: 6))
            core.perform(.dragTo(Point(185, 20)))
            core.perform(.dragEnd)
            settle(core)
            core.perform(.save)
            settle(core)
            XCTAssertEqual(core.message, "saved s.lua: 1 sketch edited, 1 deleted", start.debugDescription)
            let saved = try Data(contentsOf: URL(fileURLWithPath: box.path("s.lua")))
            XCTAssertEqual(Array(saved), Array((start + """
            image("img.png")
            local bar = addSketch{lt = {150, 20}, rt = {185, 20}, rb = {190, 120}, lb = {150, 120}}
            prepare()
            wait(0.5)

            """).utf8), start.debugDescription)
            XCTAssertNil(core.session.error.map { "\($0)" })
            core.finish()
        }
    }
}
