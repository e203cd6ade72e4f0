import Foundation
import XCTest
import WobbleCore
import WobbleMedia
import WobbleScript
import WobbleSystem
import WobbleTestSupport
@testable import WobbleEngine

/// Cutouts in a live session (the studio's engine): a cutout the runs
/// made is not made again while its image, region and mask file stay; a
/// mask held in memory (the studio's `C`) is a sketch edit that plays at
/// once and that a save writes beside the scene with the `cutout` key;
/// bad mask files are one line naming the scene's line.
final class CutoutSessionTests: SessionTestCase {
    static let w = 120, h = 90

    /// A textured background with a bright disc (centre 60, 45, radius 22), and the disc's mask.
    static func picture() -> (RGBAImage, GreyMask) {
        var img = Sandbox.pattern(width: w, height: h, checker: 5)
        var mask = GreyMask(width: w, height: h)
        for y in 0..<h {
            for x in 0..<w {
                let dx = Double(x) + 0.5 - 60, dy = Double(y) + 0.5 - 45
                guard dx * dx + dy * dy <= 22 * 22 else { continue }
                let i = (y * w + x) * 4
                img.pixels[i] = 250; img.pixels[i + 1] = 240; img.pixels[i + 2] = 40 + UInt8(x % 4) * 10
                mask.pixels[y * w + x] = 255
            }
        }
        return (img, mask)
    }

    override func image() -> RGBAImage { Self.picture().0 }

    static func text(cutout: String? = nil, rect: String = "x = 30, y = 15, w = 60, h = 60", wait: String = "0.5") -> String {
        """
        image("img.png")
        local disc = addSketch{\(rect), pin = "bottom"\(cutout.map { ", cutout = \($0)" } ?? "")}   -- the disc
        prepare()
        impulse(disc, 1, 0.5)
        wait(\(wait))

        """
    }

    func testAnAutoCutoutIsMadeOnceWhileItsImageAndRegionStay() throws {
        let path = try scene(Self.text(cutout: "\"auto\""))
        let s = LiveSession(options: SessionOptions(scenePath: path))
        XCTAssertTrue(s.run())
        XCTAssertEqual(s.cutoutsMade, 1)
        let layer = try XCTUnwrap(s.clip?.cutouts.values.first)
        // A poke, then the scene saved with another wait (a hot reload):
        // the same layer, nothing made again.
        XCTAssertTrue(s.performing([PerformedEvent(time: 0.1, action: .touch(from: Point(60, 45), to: Point(70, 45)))]))
        _ = try scene(Self.text(cutout: "\"auto\"", wait: "0.7"))
        XCTAssertTrue(s.run())
        XCTAssertEqual(s.cutoutsMade, 1, "a rerun with the same image and region does not run GrabCut again")
        XCTAssertTrue(s.clip?.cutouts.values.first === layer)
        // The region moved: made again; the image written again: made again.
        _ = try scene(Self.text(cutout: "\"auto\"", rect: "x = 31, y = 15, w = 60, h = 60"))
        XCTAssertTrue(s.run())
        XCTAssertEqual(s.cutoutsMade, 2)
        var img = Self.picture().0
        img.pixels[0] ^= 1
        try ImageIO.writePNG(img, to: dir.appendingPathComponent("img.png").path)
        XCTAssertTrue(s.run())
        XCTAssertEqual(s.cutoutsMade, 3)
        XCTAssertTrue(s.run())
        XCTAssertEqual(s.cutoutsMade, 3)
    }

    func testAMaskInMemoryPlaysAndASaveWritesItBesideTheSceneAndIntoTheCall() throws {
        let text = Self.text()
        let path = try scene(text)
        let s = LiveSession(options: SessionOptions(scenePath: path))
        XCTAssertTrue(s.run())
        XCTAssertTrue(s.clip?.cutouts.isEmpty ?? false)
        let truth = Self.picture().1
        var state = try XCTUnwrap(s.baseState(0))
        XCTAssertNil(state.parameters.cutout)
        state.parameters.cutout = CutoutRequest(source: .memory(MaskImage(mask: truth)), shape: state.points.shape, place: nil)
        s.setState(.call(0), state)
        XCTAssertTrue(s.run())
        XCTAssertEqual(s.clip?.cutouts.values.first?.mask, truth, "the edit's mask plays before it is saved")
        XCTAssertEqual(s.cutoutsMade, 1)
        let r = try s.saveEdits()
        XCTAssertEqual(r.edited, 1)
        let maskPath = dir.appendingPathComponent("scene-masks/disc.png").path
        XCTAssertEqual(s.savedMasks, [dir.appendingPathComponent("scene-masks").path + "/disc.png"])
        let saved = try ImageIO.load(path: maskPath)
        XCTAssertEqual([saved.width, saved.height], [Self.w, Self.h])
        XCTAssertEqual(stride(from: 0, to: saved.pixels.count, by: 4).map { saved.pixels[$0] }, truth.pixels, "the mask's bytes")
        let written = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertEqual(written, text.replacingOccurrences(of: "pin = \"bottom\"}", with: "pin = \"bottom\", cutout = \"scene-masks/disc.png\"}"))
        // The saved scene plays the saved mask (read from the file now): no edit left.
        XCTAssertFalse(s.hasUnsavedEdits)
        XCTAssertEqual(s.clip?.cutouts.values.first?.mask, truth)
        XCTAssertEqual(s.baseState(0)?.parameters.cutout?.source, .file(path: maskPath, written: "scene-masks/disc.png"))

        // Another mask: one file per region, so the region's own file is
        // replaced (atomically) and the call's key stays.
        var other = truth
        for k in 0..<other.pixels.count where k % Self.w < 60 { other.pixels[k] = 0 }
        state = try XCTUnwrap(s.baseState(0))
        state.parameters.cutout = CutoutRequest(source: .memory(MaskImage(mask: other)), shape: state.points.shape, place: nil)
        s.setState(.call(0), state)
        XCTAssertTrue(s.run())
        try s.saveEdits()
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8),
                       text.replacingOccurrences(of: "pin = \"bottom\"}", with: "pin = \"bottom\", cutout = \"scene-masks/disc.png\"}"))
        let replaced = try ImageIO.load(path: maskPath)
        XCTAssertEqual(stride(from: 0, to: replaced.pixels.count, by: 4).map { replaced.pixels[$0] }, other.pixels, "the region's file has the new mask")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent("scene-masks").path), ["disc.png"],
                       "one mask file for the region")
        XCTAssertEqual(s.clip?.cutouts.values.first?.mask, other)
    }

    /// A call that says `cutout = "auto"`: the studio's mask replaces the
    /// key's value in place.
    func testASavedMaskReplacesAnAutoCutoutInPlace() throws {
        let text = Self.text(cutout: "\"auto\"")
        let path = try scene(text)
        let s = LiveSession(options: SessionOptions(scenePath: path))
        XCTAssertTrue(s.run())
        var state = try XCTUnwrap(s.baseState(0))
        XCTAssertEqual(state.parameters.cutout?.source, .auto, "the call's own sketch has its own cutout")
        state.parameters.cutout = CutoutRequest(source: .memory(MaskImage(mask: Self.picture().1)), shape: state.points.shape, place: nil)
        s.setState(.call(0), state)
        try s.saveEdits()
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8),
                       text.replacingOccurrences(of: "cutout = \"auto\"", with: "cutout = \"scene-masks/disc.png\""))
    }

    /// The scene as a take writes it (`editedText`) while a mask is still
    /// in memory: the text's own `cutout` stays (no file to name yet).
    func testTheEditedTextKeepsTheScenesOwnCutoutWhileAMaskIsInMemory() throws {
        let text = Self.text(cutout: "\"auto\"")
        let path = try scene(text)
        let s = LiveSession(options: SessionOptions(scenePath: path))
        XCTAssertTrue(s.run())
        var state = try XCTUnwrap(s.baseState(0))
        state.parameters.cutout = CutoutRequest(source: .memory(MaskImage(mask: Self.picture().1)), shape: state.points.shape, place: nil)
        state.parameters.strength = 0.2
        s.setState(.call(0), state)
        XCTAssertEqual(String(decoding: try s.editedText(), as: UTF8.self),
                       text.replacingOccurrences(of: "cutout = \"auto\"}", with: "cutout = \"auto\", strength = 0.2}"))
    }

    func testASaveWhoseMaskFolderIsAFileWritesNothing() throws {
        let text = Self.text()
        let path = try scene(text)
        try "x".write(toFile: dir.appendingPathComponent("scene-masks").path, atomically: true, encoding: .utf8)
        let s = LiveSession(options: SessionOptions(scenePath: path))
        XCTAssertTrue(s.run())
        var state = try XCTUnwrap(s.baseState(0))
        state.parameters.cutout = CutoutRequest(source: .memory(MaskImage(mask: Self.picture().1)), shape: state.points.shape, place: nil)
        s.setState(.call(0), state)
        XCTAssertThrowsError(try s.saveEdits()) { e in
            XCTAssertEqual("\(e)", "not saved: \(dir.path)/scene-masks is not a folder (the cutout masks go there)")
        }
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), text, "the scene is untouched")
        XCTAssertTrue(s.hasUnsavedEdits, "the edit stays pending")
        XCTAssertEqual(s.edits.calls[0], state)
    }

    /// A saved mask that goes bad on disk: the rerun says so in one line
    /// naming the scene's line; the last good clip stays.
    func testBadMaskFilesAreOneLineNamingTheScenesLine() throws {
        let path = try scene(Self.text(cutout: "\"scene-masks/disc.png\""))
        let masks = dir.appendingPathComponent("scene-masks")
        try FileManager.default.createDirectory(at: masks, withIntermediateDirectories: true)
        let file = masks.appendingPathComponent("disc.png").path
        var grey = RGBAImage(width: Self.w, height: Self.h)
        for (k, v) in Self.picture().1.pixels.enumerated() { for c in 0..<3 { grey.pixels[k * 4 + c] = v }; grey.pixels[k * 4 + 3] = 255 }
        try ImageIO.writePNG(grey, to: file)
        let s = LiveSession(options: SessionOptions(scenePath: path))
        XCTAssertTrue(s.run(), s.error?.message ?? "")
        let good = s.clip?.cutouts.values.first
        XCTAssertNotNil(good)
        let line = "\(path):2: addSketch: cutout mask 'scene-masks/disc.png'"
        func expect(_ message: String, file: StaticString = #filePath, lineNumber: UInt = #line) {
            XCTAssertFalse(s.run(), file: file, line: lineNumber)
            XCTAssertEqual(s.error?.message, message, file: file, line: lineNumber)
            XCTAssertFalse(s.error?.message.contains("\n") ?? true, file: file, line: lineNumber)
            XCTAssertTrue(s.clip?.cutouts.values.first === good, "the last good clip stays", file: file, line: lineNumber)
        }
        try FileManager.default.removeItem(atPath: file)
        expect("\(line): no such file")
        try ImageIO.writePNG(RGBAImage(width: 60, height: 40, pixels: [UInt8](repeating: 255, count: 60 * 40 * 4)), to: file)
        expect("\(line) is 60×40, but the image is 120×90")
        try "not a picture".write(toFile: file, atomically: true, encoding: .utf8)
        expect("\(line): not a PNG or JPEG file")
        try FileManager.default.removeItem(atPath: file)
        try FileManager.default.createDirectory(atPath: file, withIntermediateDirectories: false)
        // (Lua shortens a long chunk name in its own positions: the end is exact.)
        XCTAssertFalse(s.run())
        let folder = try XCTUnwrap(s.error?.message)
        XCTAssertTrue(folder.hasSuffix("scene.lua:2: addSketch: path 'scene-masks/disc.png' is not a regular file (it is a folder); a scene reads files only (use --image for a pipe)"), folder)
        XCTAssertFalse(folder.contains("\n"))
        XCTAssertTrue(s.clip?.cutouts.values.first === good)
    }
}
