import Foundation
import XCTest
import WobbleCore
import WobbleMedia
import WobbleScript
@testable import WobbleEngine

/// A region of the scene's own text deleted in a live session
/// (`SketchEdits.deleted`): its call makes no sketch while the deletion is
/// pending, follows its call when another program saves the scene, and a
/// save takes its statement out, or is refused (the deletion pending, the
/// file as it was) when the file changed that call or uses its local now.
final class RegionDeleteSessionTests: SessionTestCase {
    override func image() -> RGBAImage {
        RGBAImage(width: 200, height: 150, pixels: [UInt8](repeating: 200, count: 200 * 150 * 4))
    }

    static let text = """
    image("img.png")
    local a = addSketch{x = 10, y = 10, w = 50, h = 40}
    local b = addSketch{x = 100, y = 10, w = 50, h = 40}
    prepare()
    impulse(a, 1, 0)
    wait(0.3)

    """

    func deletingB() throws -> (LiveSession, String) {
        let path = try scene(Self.text)
        let s = LiveSession(options: SessionOptions(scenePath: path))
        XCTAssertTrue(s.run())
        XCTAssertNil(s.deletableCall(1).problem)
        XCTAssertEqual(s.deletableCall(0).problem, "cannot delete a (\(path):2): line 5 uses a; delete that line first "
                       + "(a touch, impulse or shake: its tick on the timeline), or edit the scene in a text editor")
        s.edits.deleted = [1]
        XCTAssertTrue(s.run())
        XCTAssertEqual(s.sketchCalls.count, 2, "the deleted call is still a call (the ones after it keep their numbers)")
        XCTAssertEqual(s.handleShapes(atFrame: 0).map { $0.origin?.kind }, [.call(0)], "but makes no sketch")
        return (s, path)
    }

    func read(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    /// Another program inserts a region above: the deletion follows `b` to
    /// its new number, and the save takes out `b`'s line of the new text.
    func testADeletionFollowsItsCallThroughAnotherProgramsSave() throws {
        let (s, path) = try deletingB()
        let theirs = Self.text.replacingOccurrences(of: "image(\"img.png\")\n", with: "image(\"img.png\")\nlocal c = addSketch{x = 10, y = 80, w = 40, h = 40}\n")
        try theirs.write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertTrue(s.run())
        XCTAssertEqual(s.edits.deleted, [2])
        XCTAssertEqual(s.handleShapes(atFrame: 0).map { $0.origin?.kind }, [.call(0), .call(1)])
        let saved = try s.saveEdits()
        XCTAssertEqual(saved.deleted, 1)
        XCTAssertEqual(try read(path), theirs.replacingOccurrences(of: "local b = addSketch{x = 100, y = 10, w = 50, h = 40}\n", with: ""))
        XCTAssertEqual(s.sketchCalls.count, 2)
        XCTAssertFalse(s.hasUnsavedEdits)
    }

    /// Another program copies `b`'s line: which copy to take out cannot be
    /// told, so the deletion is not dropped silently: it stays pending
    /// (detached) and the save is refused naming `b`, the file as the other
    /// program left it; `dropDetached` lets it go.
    func testADeletionWhoseLineWasCopiedOnDiskRefusesTheSave() throws {
        let (s, path) = try deletingB()
        let line = "local b = addSketch{x = 100, y = 10, w = 50, h = 40}\n"
        let theirs = Self.text.replacingOccurrences(of: line, with: line + line)
        try theirs.write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertTrue(s.run())
        XCTAssertEqual(s.edits.deleted, [])
        XCTAssertTrue(s.hasUnsavedEdits, "the deletion is still pending")
        XCTAssertEqual(s.detached.map(\.message), ["b (\(path):3) is in the file more than once now (copied on disk); the deletion stays pending — Ctrl+Z drops it"])
        XCTAssertThrowsError(try s.saveEdits()) { e in
            XCTAssertEqual("\(e)", "not saved: b (\(path):3) is in the file more than once now (copied on disk); the deletion stays pending — Ctrl+Z drops it")
        }
        XCTAssertEqual(try read(path), theirs)
        XCTAssertEqual(s.dropDetached().map(\.deletion), [true])
        XCTAssertFalse(s.hasUnsavedEdits)
    }

    /// A write-protected scene file, or (not as root) a folder the save
    /// cannot create its new text in: one line naming the scene or its
    /// folder, the deletion pending, the file as it was.
    func testASaveThatCannotWriteTheSceneSaysWhy() throws {
        let (s, path) = try deletingB()
        XCTAssertEqual(chmod(path, 0o444), 0)
        XCTAssertThrowsError(try s.saveEdits()) { e in
            XCTAssertEqual("\(e)", "not saved: the scene '\(path)': the file is write-protected (mode 444); not replaced")
        }
        XCTAssertEqual(chmod(path, 0o644), 0)
        XCTAssertEqual(try read(path), Self.text)
        XCTAssertEqual(s.edits.deleted, [1])
        guard getuid() != 0 else { return }   // (root creates files in a read-only folder)
        let folder = (path as NSString).deletingLastPathComponent
        XCTAssertEqual(chmod(folder, 0o555), 0)
        defer { chmod(folder, 0o755) }
        XCTAssertThrowsError(try s.saveEdits()) { e in
            XCTAssertEqual("\(e)", "not saved: cannot create a file in the scene's folder '\(folder)' (Permission denied): "
                           + "a save writes the new scene beside it and renames it over")
        }
        XCTAssertEqual(try read(path), Self.text)
    }

    /// `b` changed on disk, or used on disk now: not saved, one line, the
    /// file as the other program left it, the deletion still pending.
    func testADeletionIsRefusedWhenTheFileChangedItsCallOrUsesItsLocal() throws {
        let (s, path) = try deletingB()
        let changed = Self.text.replacingOccurrences(of: "x = 100", with: "x = 90")
        try changed.write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try s.saveEdits()) { e in
            XCTAssertEqual("\(e)", "not saved: the deleted b (\(path):3) was changed on disk as well; the deletion stays pending (Ctrl+Z undoes it)")
        }
        XCTAssertEqual(try read(path), changed)
        XCTAssertEqual(s.edits.deleted, [1])

        let uses = Self.text.replacingOccurrences(of: "impulse(a, 1, 0)\n", with: "impulse(a, 1, 0)\nimpulse(b, 1, 0)\n")
        try uses.write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try s.saveEdits()) { e in
            XCTAssertEqual("\(e)", "not saved: cannot delete b (\(path):3): line 6 uses b; delete that line first (a touch, impulse or shake: "
                           + "its tick on the timeline), or edit the scene in a text editor; the deletion stays pending (Ctrl+Z undoes it)")
        }
        XCTAssertEqual(try read(path), uses)
        XCTAssertEqual(s.edits.deleted, [1])
    }
}
