import Foundation
import XCTest
import WobbleCore
@testable import WobbleMedia
import WobbleSystem

final class PNGSequenceSinkTests: XCTestCase {
    var scratch: Scratch!
    var oldMask: mode_t = 0
    override func setUpWithError() throws {
        scratch = try Scratch()
        oldMask = umask(0o022)
    }
    override func tearDown() {
        umask(oldMask)
        scratch.remove()
    }

    /// A distinct tiny frame per index.
    func frame(_ index: Int) -> RGBAImage {
        RGBAImage(width: 2, height: 1, pixels: [UInt8(truncatingIfNeeded: index), 1, 2, 255, 3, UInt8(truncatingIfNeeded: index / 256), 5, 128])
    }

    /// Every path under a folder (hidden ones too) with its bytes.
    func snapshot(_ path: String) throws -> [String: [UInt8]] {
        var result: [String: [UInt8]] = [:]
        let fm = FileManager.default
        for name in try fm.subpathsOfDirectory(atPath: path) {
            var isDir: ObjCBool = false
            _ = fm.fileExists(atPath: path + "/" + name, isDirectory: &isDir)
            result[name] = isDir.boolValue ? [] : try readBytes(path + "/" + name)
        }
        return result
    }

    func render(_ sink: PNGSequenceSink, _ indices: [Int]) throws {
        for i in indices { try sink.write(frame(i), index: i) }
    }

    // MARK: Folders

    func testNewFolderAppearsOnlyOnFinish() throws {
        let target = scratch.file("out") + "/"
        let sink = try PNGSequenceSink(output: .directory(target), fullRender: true, framesInFlight: 2)
        try render(sink, [0, 1, 2])
        XCTAssertFalse(FileManager.default.fileExists(atPath: target))
        XCTAssertEqual(try scratch.list().filter { !$0.hasPrefix(".") }, [])
        try sink.finish()
        XCTAssertEqual(try scratch.list(), ["out"], "no temporary folder left")
        XCTAssertEqual(try scratch.list("out"), ["frame_00000.png", "frame_00001.png", "frame_00002.png"])
        XCTAssertEqual(try permissions(scratch.file("out")), 0o755)
        for i in 0..<3 {
            let path = scratch.file("out/frame_0000\(i).png")
            XCTAssertEqual(try permissions(path), 0o644)
            XCTAssertEqual(try ImageIO.load(path: path), frame(i))
            XCTAssertEqual(sink.path(forFrame: i), target + "frame_0000\(i).png".replacingOccurrences(of: "//", with: "/"))
        }
    }

    func testExistingFolderReplacesFramesRemovesStaleKeepsOthers() throws {
        let dir = scratch.file("out")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
        try writeBytes([1], to: dir + "/frame_00000.png")
        try writeBytes([2], to: dir + "/frame_00007.png")
        try writeBytes([3], to: dir + "/frame_7.png")
        try writeBytes([4], to: dir + "/notes.txt")
        try FileManager.default.createDirectory(atPath: dir + "/frame_00009.png", withIntermediateDirectories: false)
        let before = try snapshot(dir)

        let sink = try PNGSequenceSink(output: .directory(dir), fullRender: true)
        try render(sink, [0, 1, 2])
        XCTAssertEqual(try snapshot(dir).filter { !$0.key.hasPrefix(".") }, before, "target unchanged before finish")
        try sink.finish()
        XCTAssertEqual(try scratch.list("out"), ["frame_00000.png", "frame_00001.png", "frame_00002.png",
                                                 "frame_00009.png", "frame_7.png", "notes.txt"])
        XCTAssertEqual(try ImageIO.load(path: dir + "/frame_00000.png"), frame(0))
        XCTAssertEqual(try readBytes(dir + "/notes.txt"), [4])
    }

    func testFramesSliceKeepsOtherFrames() throws {
        let dir = scratch.file("out")
        let full = try PNGSequenceSink(output: .directory(dir + "/"), fullRender: true)
        try render(full, Array(0..<6))
        try full.finish()
        let slice = try PNGSequenceSink(output: .directory(dir), fullRender: false)
        try slice.write(frame(40), index: 3)
        try slice.write(frame(41), index: 4)
        try slice.finish()
        XCTAssertEqual(try scratch.list("out"), (0..<6).map { "frame_0000\($0).png" })
        XCTAssertEqual(try ImageIO.load(path: dir + "/frame_00002.png"), frame(2))
        XCTAssertEqual(try ImageIO.load(path: dir + "/frame_00003.png"), frame(40))
        XCTAssertEqual(try ImageIO.load(path: dir + "/frame_00004.png"), frame(41))
        XCTAssertEqual(try ImageIO.load(path: dir + "/frame_00005.png"), frame(5))
    }

    func testAbortLeavesTargetByteIdentical() throws {
        let dir = scratch.file("out")
        let first = try PNGSequenceSink(output: .directory(dir + "/"), fullRender: true)
        try render(first, [0, 1, 2, 3])
        try first.finish()
        try writeBytes([9, 9], to: dir + "/keep.txt")
        let before = try snapshot(scratch.path)

        let sink = try PNGSequenceSink(output: .directory(dir), fullRender: true)
        try sink.write(frame(50), index: 0)
        try sink.write(frame(51), index: 1)
        sink.abort()
        sink.abort()  // idempotent
        XCTAssertEqual(try snapshot(scratch.path), before)
        XCTAssertThrowsError(try sink.write(frame(1), index: 2))

        // A new folder that is aborted never appears; nor does anything beside it.
        let fresh = try PNGSequenceSink(output: .directory(scratch.file("fresh/")), fullRender: true)
        try fresh.write(frame(0), index: 0)
        fresh.abort()
        XCTAssertEqual(try snapshot(scratch.path), before)
    }

    func testDroppedSinkAbortsAndSignalCleanupRemovesTemporaryFolder() throws {
        do {
            let sink = try PNGSequenceSink(output: .directory(scratch.file("a/")), fullRender: true)
            try sink.write(frame(0), index: 0)
        }
        XCTAssertEqual(try scratch.list(), [])
        let sink = try PNGSequenceSink(output: .directory(scratch.file("b/")), fullRender: true)
        try sink.write(frame(0), index: 0)
        XCTAssertEqual(try scratch.list().count, 1)
        TemporaryPaths.removeAll()  // what the CLI does on SIGINT
        XCTAssertEqual(try scratch.list(), [])
        sink.abort()
    }

    func testFolderErrors() throws {
        let file = scratch.file("file")
        try writeBytes([0], to: file)
        XCTAssertEqual(mediaErrorMessage { try PNGSequenceSink(output: .directory(file + "/"), fullRender: true) },
                       "output '\(file)/': '\(file)' exists and is not a folder")
        let deep = scratch.file("no/such/")
        XCTAssertEqual(mediaErrorMessage { try PNGSequenceSink(output: .directory(deep), fullRender: true) },
                       "output '\(deep)': folder '\(scratch.file("no"))' does not exist")
    }

    func testIndicesMustIncrease() throws {
        let sink = try PNGSequenceSink(output: .directory(scratch.file("o/")), fullRender: true)
        try sink.write(frame(0), index: 4)
        XCTAssertEqual(mediaErrorMessage { try sink.write(frame(0), index: 4) },
                       "output '\(scratch.file("o/"))': frame 4 arrived after frame 4")
        sink.abort()
    }

    // MARK: Patterns

    func testPatternNamesStaleAndLiteralPercent() throws {
        let pattern = scratch.file("out_%04d.png")
        try writeBytes([1], to: scratch.file("out_0001.png"))   // stale
        try writeBytes([2], to: scratch.file("out_1.png"))      // not a %04d name
        try writeBytes([3], to: scratch.file("other.png"))
        let sink = try PNGSequenceSink(output: .pattern(pattern), fullRender: true)
        try render(sink, [8, 9, 10, 12345])
        XCTAssertEqual(try scratch.list().filter { !$0.hasPrefix(".") }, ["other.png", "out_0001.png", "out_1.png"])
        try sink.finish()
        XCTAssertEqual(try scratch.list(), ["other.png", "out_0008.png", "out_0009.png", "out_0010.png", "out_1.png", "out_12345.png"])
        XCTAssertEqual(try ImageIO.load(path: scratch.file("out_0010.png")), frame(10))
        XCTAssertEqual(try permissions(scratch.file("out_0010.png")), 0o644)

        let plain = try PNGSequenceSink(output: .pattern(scratch.file("p%%_%d.png")), fullRender: false)
        try render(plain, [3])
        try plain.finish()
        XCTAssertTrue(FileManager.default.fileExists(atPath: scratch.file("p%_3.png")))
        XCTAssertEqual(plain.path(forFrame: 7), scratch.file("p%_7.png"))
    }

    func testPatternParsing() throws {
        let p = try FrameNamePattern(fileName: "out_%05d.png", output: "o")
        XCTAssertEqual(p.fileName(7), "out_00007.png")
        XCTAssertEqual(p.fileName(123456), "out_123456.png")
        XCTAssertEqual(p.index(ofFileName: "out_00007.png"), 7)
        XCTAssertEqual(p.index(ofFileName: "out_123456.png"), 123456)
        XCTAssertNil(p.index(ofFileName: "out_0007.png"))
        XCTAssertNil(p.index(ofFileName: "out_0000x.png"))
        XCTAssertNil(p.index(ofFileName: "out_.png"))
        XCTAssertNil(p.index(ofFileName: "out_-0007.png"))
        XCTAssertEqual(try FrameNamePattern(fileName: "%d", output: "o").fileName(0), "0")
        XCTAssertEqual(try FrameNamePattern(fileName: "100%%_%03d%%.png", output: "o").fileName(5), "100%_005%.png")
    }

    func testPatternErrors() throws {
        let help = "use %d or %0Nd (such as %04d) for the frame number, and %% for a literal %"
        let cases: [(String, String)] = [
            ("x_%s.png", "unsupported conversion '%s' in the file name pattern; \(help)"),
            ("x_%4d.png", "unsupported conversion '%4d' in the file name pattern; \(help)"),
            ("x_%011d.png", "unsupported conversion '%011d' in the file name pattern; \(help)"),
            ("x_%", "unsupported conversion '%' in the file name pattern; \(help)"),
            ("x_%d_%d.png", "the file name pattern has more than one frame-number conversion; \(help)"),
            ("x_%%.png", "the file name pattern has no frame-number conversion; \(help)"),
            ("%d/x.png", "the frame number must be in the file name, not in the folder"),
            ("nope/x_%d.png", "folder 'nope' does not exist"),
        ]
        for (pattern, message) in cases {
            XCTAssertEqual(mediaErrorMessage { try PNGSequenceSink(output: .pattern(pattern), fullRender: true) },
                           "output '\(pattern)': \(message)")
            XCTAssertThrowsError(try PNGOutput.pattern(pattern).validate())
        }
        XCTAssertNoThrow(try PNGOutput.pattern("x_%d.png").validate())
    }

    // MARK: Single file, parse

    func testSingleFile() throws {
        let path = scratch.file("still.png")
        try writeBytes([7], to: path)
        XCTAssertEqual(mediaErrorMessage { try PNGSequenceSink(output: .file(path), fullRender: true, frameCount: 3) },
                       "output '\(path)': the clip has 3 frames; write PNG frames to a folder ('\(scratch.file("still"))/') or a pattern ('\(scratch.file("still"))_%04d.png'), or make one animated PNG (--format apng)")
        let sink = try PNGSequenceSink(output: .file(path), fullRender: true, frameCount: 1)
        try sink.write(frame(5), index: 5)
        XCTAssertEqual(try readBytes(path), [7])
        try sink.finish()
        XCTAssertEqual(try ImageIO.load(path: path), frame(5))
        XCTAssertEqual(try permissions(path), 0o644)
        XCTAssertEqual(sink.path(forFrame: 5), path)

        let two = try PNGSequenceSink(output: .file(path), fullRender: true)
        try two.write(frame(0), index: 0)
        XCTAssertEqual(mediaErrorMessage { try two.write(frame(1), index: 1) },
                       "output '\(path)': the clip has more than one frame; write PNG frames to a folder ('\(scratch.file("still"))/') or a pattern ('\(scratch.file("still"))_%04d.png'), or make one animated PNG (--format apng)")
        two.abort()
        XCTAssertEqual(try scratch.list(), ["still.png"])
        XCTAssertEqual(try ImageIO.load(path: path), frame(5))
    }

    func testParse() throws {
        XCTAssertEqual(PNGOutput.parse("frames/"), .directory("frames/"))
        XCTAssertEqual(PNGOutput.parse(scratch.path), .directory(scratch.path))
        XCTAssertEqual(PNGOutput.parse("out_%04d.png"), .pattern("out_%04d.png"))
        XCTAssertEqual(PNGOutput.parse("a/out_%d"), .pattern("a/out_%d"))
        XCTAssertEqual(PNGOutput.parse("still.PNG"), .file("still.PNG"))
        XCTAssertNil(PNGOutput.parse("clip.gif"))
        XCTAssertNil(PNGOutput.parse("clip_%d.gif"))
        XCTAssertNil(PNGOutput.parse("clip"))
        XCTAssertNil(PNGOutput.parse(""))
        XCTAssertEqual(try PNGOutput.directory("f/").path(forFrame: 3), "f/frame_00003.png")
        XCTAssertEqual(try PNGOutput.pattern("o_%03d.png").path(forFrame: 3), "o_003.png")
        XCTAssertEqual(try PNGOutput.pattern("/tmp/o_%03d.png").path(forFrame: 3), "/tmp/o_003.png")
    }
}
