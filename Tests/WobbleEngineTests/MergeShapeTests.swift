import Foundation
import XCTest
import WobbleCore
import WobbleMedia
import WobbleScript
@testable import WobbleEngine

/// Every shape of another program's change to a scene with an edit
/// pending: the edit either goes into its own call or the save is refused
/// naming the sketch, nothing written — never one sketch's edit written
/// into another's line.
final class MergeShapeTests: SessionTestCase {
    override func image() -> RGBAImage {
        RGBAImage(width: 200, height: 150, pixels: [UInt8](repeating: 200, count: 200 * 150 * 4))
    }

    static let text = """
    image("img.png")
    local body = addSketch{x = 10, y = 10, w = 50, h = 40}
    local ear = addSketch{x = 100, y = 20, w = 30, h = 30, strength = 0.2}
    prepare()
    wait(0.3)

    """
    static let bodyLine = "local body = addSketch{x = 10, y = 10, w = 50, h = 40}\n"
    static let earLine = "local ear = addSketch{x = 100, y = 20, w = 30, h = 30, strength = 0.2}\n"

    /// A session on the scene with `body`'s left top corner dragged to (0, 0).
    private func bodyDragged(_ text: String = MergeShapeTests.text) throws -> (LiveSession, String) {
        let path = try scene(text)
        let s = LiveSession(options: SessionOptions(scenePath: path))
        XCTAssertTrue(s.run())
        XCTAssertEqual(s.baseState(0)?.name, "body")
        var p = s.sketchCalls[0].points
        p.lt = Point(0, 0)
        s.sketchOverrides[0] = p
        return (s, path)
    }

    private func write(_ text: String, _ path: String) throws {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    private func read(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    /// The reported data loss: an editor deletes body's line (an atomic
    /// save), the scene runs again, Ctrl+S. Today's code wrote body's
    /// corners over ear's line; now the save is refused naming body, ear's
    /// line survives byte for byte, and dropping the edit leaves nothing.
    func testTheEditedCallDeletedIsRefusedAndTheNextLineSurvives() throws {
        let (s, path) = try bodyDragged()
        let deleted = MergeShapeTests.text.replacingOccurrences(of: MergeShapeTests.bodyLine, with: "")
        try write(deleted, path)
        XCTAssertTrue(s.run())
        XCTAssertEqual(s.sketchCalls.count, 1)
        XCTAssertTrue(s.edits.calls.isEmpty, "the edit is on no call: ear keeps its own shape")
        XCTAssertEqual(s.handleShapes(atFrame: 0).first?.shape.lt, Point(100, 20))
        XCTAssertEqual(s.detached.count, 1)
        XCTAssertTrue(s.hasUnsavedEdits)
        let expected = "not saved: body (\(path):2) was deleted on disk; the edit stays pending — Ctrl+Z drops it"
        XCTAssertEqual(s.mergeProblem(), expected)
        XCTAssertThrowsError(try s.saveEdits(runAfter: false)) { e in XCTAssertEqual("\(e)", expected) }
        XCTAssertEqual(try read(path), deleted, "nothing written: ear's line byte for byte")
        XCTAssertTrue(try read(path).contains(MergeShapeTests.earLine))
        // Ctrl+Z drops it: nothing is left to save.
        XCTAssertEqual(s.dropDetached().map(\.label), ["body (\(path):2)"])
        XCTAssertFalse(s.hasUnsavedEdits)
        XCTAssertNil(s.mergeProblem())
    }

    /// The same, when the scene uses `body` elsewhere (the run after the
    /// deletion fails, so the save meets the change itself).
    func testTheEditedCallDeletedWhileTheSceneFailsIsRefused() throws {
        let used = MergeShapeTests.text.replacingOccurrences(of: "wait(0.3)", with: "local _ = body.lt\nwait(0.3)")
        let (s, path) = try bodyDragged(used)
        let deleted = used.replacingOccurrences(of: MergeShapeTests.bodyLine, with: "")
        try write(deleted, path)
        XCTAssertFalse(s.run(), "body is nil now")
        let expected = "not saved: body (\(path):2) was deleted on disk; the edit stays pending — Ctrl+Z drops it"
        XCTAssertEqual(s.mergeProblem(), expected)
        XCTAssertThrowsError(try s.saveEdits(runAfter: false)) { e in XCTAssertEqual("\(e)", expected) }
        XCTAssertEqual(try read(path), deleted)
    }

    /// Deleted with another call inserted in its place: refused, named.
    func testTheEditedCallReplacedByAnotherIsRefused() throws {
        let (s, path) = try bodyDragged()
        let replaced = MergeShapeTests.text.replacingOccurrences(
            of: MergeShapeTests.bodyLine, with: "local tail = addSketch{x = 20, y = 90, w = 40, h = 40}\n")
        // Before the scene runs again, and after.
        try write(replaced, path)
        let expected = "not saved: body (\(path):2) was deleted on disk; the edit stays pending — Ctrl+Z drops it"
        XCTAssertEqual(s.mergeProblem(), expected)
        XCTAssertTrue(s.run())
        XCTAssertTrue(s.edits.calls.isEmpty, "tail does not get body's edit")
        XCTAssertEqual(s.handleShapes(atFrame: 0).first?.shape.lt, Point(20, 90))
        XCTAssertEqual(s.mergeProblem(), expected)
        XCTAssertThrowsError(try s.saveEdits(runAfter: false))
        XCTAssertEqual(try read(path), replaced)
    }

    /// The local renamed on disk: the edit goes into the renamed call
    /// (the new name kept), before and after the scene runs again.
    func testTheLocalRenamedOnDiskMerges() throws {
        for rerun in [false, true] {
            let (s, path) = try bodyDragged()
            let renamed = MergeShapeTests.text.replacingOccurrences(of: "local body =", with: "local torso =")
            try write(renamed, path)
            if rerun {
                XCTAssertTrue(s.run())
                XCTAssertEqual(s.edits.calls[0]?.name, "torso", "the edit takes the new name")
            }
            XCTAssertNil(s.mergeProblem())
            try s.saveEdits(runAfter: false)
            XCTAssertEqual(try read(path), renamed.replacingOccurrences(
                of: "addSketch{x = 10, y = 10, w = 50, h = 40}",
                with: "addSketch{lt = {0, 0}, rt = {60, 10}, rb = {60, 50}, lb = {10, 50}}"), "rerun: \(rerun)")
        }
    }

    /// Renamed on disk and in the studio: refused (whose name wins cannot be told).
    func testARenameOnBothSidesIsRefused() throws {
        let (s, path) = try bodyDragged()
        var state = try XCTUnwrap(s.edits.calls[0])
        state.name = "chest"
        s.setState(.call(0), state)
        let renamed = MergeShapeTests.text.replacingOccurrences(of: "local body =", with: "local torso =")
        try write(renamed, path)
        let expected = "not saved: body (\(path):2) was renamed on disk as well; the edits stay pending (Ctrl+Z undoes them)"
        XCTAssertEqual(s.mergeProblem(), expected)
        XCTAssertThrowsError(try s.saveEdits(runAfter: false)) { e in XCTAssertEqual("\(e)", expected) }
        XCTAssertEqual(try read(path), renamed)
    }

    /// The two lines swapped: the edit follows body to its new line.
    func testSwappedLinesMerge() throws {
        for rerun in [false, true] {
            let (s, path) = try bodyDragged()
            let swapped = MergeShapeTests.text.replacingOccurrences(
                of: MergeShapeTests.bodyLine + MergeShapeTests.earLine, with: MergeShapeTests.earLine + MergeShapeTests.bodyLine)
            try write(swapped, path)
            if rerun {
                XCTAssertTrue(s.run())
                XCTAssertEqual(s.edits.calls.keys.sorted(), [1], "the edit is on body's new ordinal")
                XCTAssertEqual(s.handleShapes(atFrame: 0).first?.shape.lt, Point(100, 20), "ear as written")
            }
            XCTAssertNil(s.mergeProblem())
            try s.saveEdits(runAfter: false)
            XCTAssertEqual(try read(path), swapped.replacingOccurrences(
                of: "addSketch{x = 10, y = 10, w = 50, h = 40}",
                with: "addSketch{lt = {0, 0}, rt = {60, 10}, rb = {60, 50}, lb = {10, 50}}"), "rerun: \(rerun)")
            XCTAssertTrue(try read(path).contains(MergeShapeTests.earLine))
        }
    }

    /// The edited call copied on disk (above or below itself): which copy
    /// is the edited one cannot be told, so the save is refused.
    func testACallDuplicatedOnDiskIsRefused() throws {
        for copy in [MergeShapeTests.bodyLine.replacingOccurrences(of: "local body", with: "body"), MergeShapeTests.bodyLine] {
            let (s, path) = try bodyDragged()
            let doubled = MergeShapeTests.text.replacingOccurrences(of: MergeShapeTests.bodyLine, with: copy + MergeShapeTests.bodyLine)
            try write(doubled, path)
            let expected = "not saved: body (\(path):2) is in the file more than once now (copied on disk); the edit stays pending — Ctrl+Z drops it"
            XCTAssertEqual(s.mergeProblem(), expected, "before the run")
            XCTAssertTrue(s.run())
            XCTAssertTrue(s.edits.calls.isEmpty, "neither copy gets the edit")
            XCTAssertEqual(s.mergeProblem(), expected)
            XCTAssertThrowsError(try s.saveEdits(runAfter: false))
            XCTAssertEqual(try read(path), doubled, "nothing written")
        }
    }

    /// Another call deleted (not the edited one): the edit merges.
    func testAnotherCallDeletedMerges() throws {
        let (s, path) = try bodyDragged()
        let deleted = MergeShapeTests.text.replacingOccurrences(of: MergeShapeTests.earLine, with: "")
        try write(deleted, path)
        XCTAssertTrue(s.run())
        XCTAssertNil(s.mergeProblem())
        try s.saveEdits(runAfter: false)
        XCTAssertEqual(try read(path), deleted.replacingOccurrences(
            of: "addSketch{x = 10, y = 10, w = 50, h = 40}",
            with: "addSketch{lt = {0, 0}, rt = {60, 10}, rb = {60, 50}, lb = {10, 50}}"))
    }

    /// The scene file deleted, renamed away or replaced by a folder: the
    /// save is refused (nothing written there) and the edits can be kept
    /// in `<scene>.unsaved.lua` beside it, never over another file.
    func testTheSceneFileGoneKeepsTheEditsInAnUnsavedFile() throws {
        for shape in ["deleted", "renamed", "folder"] {
            let (s, path) = try bodyDragged()
            switch shape {
            case "deleted": try FileManager.default.removeItem(atPath: path)
            case "renamed": try FileManager.default.moveItem(atPath: path, toPath: path + ".bak")
            default:
                try FileManager.default.removeItem(atPath: path)
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            }
            XCTAssertTrue(s.sceneFileIsGone)
            let expected = shape == "folder"
                ? "not saved: \(path) is a folder now; the edits stay pending"
                : "not saved: \(path) is gone from disk (deleted or renamed); the edits stay pending"
            XCTAssertEqual(s.mergeProblem(), expected)
            XCTAssertThrowsError(try s.saveEdits(runAfter: false)) { e in
                XCTAssertEqual("\(e)", expected)
                XCTAssertEqual((e as? LiveSession.SaveError)?.fileGone, true)
            }
            let unsaved = dir.appendingPathComponent("scene.unsaved.lua").path
            // Something already there is never overwritten.
            try "keep me\n".write(toFile: unsaved, atomically: true, encoding: .utf8)
            let written = try s.writeUnsaved()
            XCTAssertEqual(written, dir.appendingPathComponent("scene.unsaved-2.lua").path)
            XCTAssertEqual(try read(unsaved), "keep me\n")
            XCTAssertEqual(try read(written), MergeShapeTests.text.replacingOccurrences(
                of: "addSketch{x = 10, y = 10, w = 50, h = 40}",
                with: "addSketch{lt = {0, 0}, rt = {60, 10}, rb = {60, 50}, lb = {10, 50}}"), shape)
            XCTAssertTrue(s.hasUnsavedEdits, "the edits stay pending")
            try FileManager.default.removeItem(atPath: unsaved)
            try FileManager.default.removeItem(atPath: written)
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: path + ".bak")
        }
    }

    /// The pending text already in the unsaved file, unchanged since, is not
    /// written again (a second Ctrl+S, or quitting after one, wrote an
    /// identical `scene.unsaved-2.lua`): its path is returned. Changed on
    /// disk, or with other pending edits, a new file is written.
    func testTheUnsavedFileIsNotWrittenTwice() throws {
        let (s, path) = try bodyDragged()
        try FileManager.default.removeItem(atPath: path)
        let first = try s.writeUnsaved()
        XCTAssertEqual(first, dir.appendingPathComponent("scene.unsaved.lua").path)
        XCTAssertEqual(try s.writeUnsaved(), first)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("scene.unsaved-2.lua").path))
        // Someone changed it meanwhile: it is kept, the edits go beside it.
        try "changed\n".write(toFile: first, atomically: true, encoding: .utf8)
        let second = try s.writeUnsaved()
        XCTAssertEqual(second, dir.appendingPathComponent("scene.unsaved-2.lua").path)
        XCTAssertEqual(try read(first), "changed\n")
        XCTAssertEqual(try s.writeUnsaved(), second)
        try FileManager.default.removeItem(atPath: first)
        try FileManager.default.removeItem(atPath: second)
    }

    /// The matching itself: unchanged calls, a rename, a changed argument
    /// under its name, an unnamed call changed in place, deletions and copies.
    func testMatchFindsCallsByIdentity() {
        func src(_ s: String) -> SketchSource { SketchSource(text: Array(s.utf8)) }
        let a = src("local a = addSketch{x = 1}\nlocal b = addSketch{x = 2}\naddSketch{x = 3}\n")
        XCTAssertEqual(SourceMerge.match(a, a), [.same(0), .same(1), .same(2)])
        XCTAssertEqual(SourceMerge.match(a, src("local b = addSketch{x = 2}\naddSketch{x = 3}\n")), [.deleted, .same(0), .same(1)])
        XCTAssertEqual(SourceMerge.match(a, src("local c = addSketch{x = 1}\nlocal b = addSketch{x = 2}\naddSketch{x = 3}\n")),
                       [.renamed(0), .same(1), .same(2)])
        XCTAssertEqual(SourceMerge.match(a, src("local a = addSketch{x = 9}\nlocal b = addSketch{x = 2}\naddSketch{x = 4}\n")),
                       [.changed(0), .same(1), .changed(2)])
        XCTAssertEqual(SourceMerge.match(a, src("local a = addSketch{x = 1}\nlocal a = addSketch{x = 1}\nlocal b = addSketch{x = 2}\naddSketch{x = 3}\n")),
                       [.duplicated, .same(2), .same(3)])
        // An unnamed call deleted and another inserted: not the same call.
        XCTAssertEqual(SourceMerge.match(a, src("local a = addSketch{x = 1}\naddSketch{x = 7}\nlocal b = addSketch{x = 2}\n")),
                       [.same(0), .same(2), .deleted])
        // Two identical calls stay in order; one of them gone cannot be told.
        let twice = src("addSketch()\naddSketch()\n")
        XCTAssertEqual(SourceMerge.match(twice, twice), [.same(0), .same(1)])
        XCTAssertEqual(SourceMerge.match(twice, src("addSketch()\n")), [.deleted, .deleted])
    }
}
