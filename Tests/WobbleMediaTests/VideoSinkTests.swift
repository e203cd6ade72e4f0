import Foundation
import XCTest
import WobbleCore
@testable import WobbleMedia
import WobbleSystem

/// VideoSink: tiny clips through the installed ffmpeg, read back by ffprobe.
final class VideoSinkTests: XCTestCase {
    var scratch: Scratch!

    override func setUpWithError() throws {
        // Scripts/test.sh installs ffmpeg (install-deps.sh --bench); skip only
        // where it really is not installed.
        guard ChildProcess.findExecutable("ffmpeg") != nil, ChildProcess.findExecutable("ffprobe") != nil else {
            throw XCTSkip("ffmpeg/ffprobe not on PATH (Scripts/install-deps.sh --bench installs them)")
        }
        scratch = try Scratch()
    }

    override func tearDown() { scratch?.remove() }

    /// A frame with a moving square over a gradient, half transparent on the left.
    func frame(_ k: Int, _ w: Int, _ h: Int) -> RGBAImage {
        var px = [UInt8](repeating: 0, count: w * h * 4)
        for y in 0..<h {
            for x in 0..<w {
                let i = (y * w + x) * 4
                let inSquare = abs(x - (k * 3) % w) < 4 && abs(y - h / 2) < 4
                px[i] = inSquare ? 255 : UInt8(x * 255 / w)
                px[i + 1] = UInt8(y * 255 / h)
                px[i + 2] = 90
                px[i + 3] = x < w / 2 ? 100 : 255
            }
        }
        return RGBAImage(width: w, height: h, pixels: px)
    }

    /// `ffprobe` facts about the first video stream.
    func probe(_ path: String) throws -> [String: String] {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: ChildProcess.findExecutable("ffprobe")!)
        p.arguments = ["-v", "error", "-count_frames", "-select_streams", "v:0",
                       "-show_entries", "stream=codec_name,width,height,nb_read_frames:stream_tags=alpha_mode",
                       "-of", "default=noprint_wrappers=1", path]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, "ffprobe \(path)")
        var facts: [String: String] = [:]
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let kv = line.split(separator: "=", maxSplits: 1)
            if kv.count == 2 { facts[String(kv[0]).lowercased()] = String(kv[1]) }
        }
        return facts
    }

    func write(_ path: String, _ w: Int, _ h: Int, frames: Int, fps: Double = 10) throws -> VideoSink {
        let sink = try VideoSink(path: path, width: w, height: h, fps: fps)
        for k in 0..<frames { try sink.write(frame(k, w, h), index: k) }
        try sink.finish()
        return sink
    }

    func testMP4IsH264WithEveryFrame() throws {
        let path = scratch.file("clip.mp4")
        let sink = try write(path, 32, 24, frames: 7)
        let facts = try probe(path)
        XCTAssertEqual(facts["codec_name"], sink.encoder == "libx264" ? "h264" : "mpeg4")
        XCTAssertEqual(facts["width"], "32")
        XCTAssertEqual(facts["height"], "24")
        XCTAssertEqual(facts["nb_read_frames"], "7")
        XCTAssertEqual(try scratch.list(), ["clip.mp4"], "no temporary file left")
        let attrs = try FileManager.default.attributesOfItem(atPath: path)
        let mask = umask(0); umask(mask)
        XCTAssertEqual((attrs[.posixPermissions] as? Int) ?? 0, 0o666 & ~Int(mask))
    }

    func testOddSizeMP4IsPaddedToEven() throws {
        let path = scratch.file("odd.mp4")
        _ = try write(path, 31, 23, frames: 3)
        let facts = try probe(path)
        XCTAssertEqual(facts["width"], "32")
        XCTAssertEqual(facts["height"], "24")
        XCTAssertEqual(facts["nb_read_frames"], "3")
    }

    /// The first frame of a video as RGB bytes, decoded by ffmpeg.
    func decodeFirstFrame(_ path: String) throws -> [UInt8] {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: ChildProcess.findExecutable("ffmpeg")!)
        p.arguments = ["-v", "error", "-i", path, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "pipe:1"]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return [UInt8](data)
    }

    func testMP4CompositesTransparencyOverBlack() throws {
        // Left half: white with alpha 0 (no colour at all); right half opaque white.
        var px = [UInt8](repeating: 255, count: 32 * 32 * 4)
        for y in 0..<32 { for x in 0..<16 { px[(y * 32 + x) * 4 + 3] = 0 } }
        let path = scratch.file("flat.mp4")
        let sink = try VideoSink(path: path, width: 32, height: 32, fps: 5)
        try sink.write(RGBAImage(width: 32, height: 32, pixels: px), index: 0)
        try sink.finish()
        let rgb = try decodeFirstFrame(path)
        XCTAssertEqual(rgb.count, 32 * 32 * 3)
        XCTAssertLessThan(rgb[(16 * 32 + 4) * 3], 40, "transparent → black")
        XCTAssertGreaterThan(rgb[(16 * 32 + 28) * 3], 215, "opaque white stays white")
    }

    func testWebMIsVP9WithAlpha() throws {
        let path = scratch.file("clip.webm")
        let sink = try write(path, 33, 21, frames: 5, fps: 29.97)
        XCTAssertTrue(sink.encoder.hasPrefix("libvpx"))
        let facts = try probe(path)
        XCTAssertEqual(facts["codec_name"], sink.encoder == "libvpx-vp9" ? "vp9" : "vp8")
        XCTAssertEqual(facts["width"], "33")
        XCTAssertEqual(facts["height"], "21")
        XCTAssertEqual(facts["nb_read_frames"], "5")
        XCTAssertEqual(facts["tag:alpha_mode"], "1", "alpha kept: \(facts)")
    }

    func testExistingTargetStaysUntilFinishAndAbortLeavesNothing() throws {
        let path = scratch.file("keep.mp4")
        try writeBytes([1, 2, 3], to: path)
        let sink = try VideoSink(path: path, width: 16, height: 16, fps: 5)
        try sink.write(frame(0, 16, 16), index: 0)
        XCTAssertEqual(try readBytes(path), [1, 2, 3])
        XCTAssertEqual(try scratch.list().count, 2, "temporary file beside the target")
        sink.abort()
        XCTAssertEqual(try readBytes(path), [1, 2, 3])
        XCTAssertEqual(try scratch.list(), ["keep.mp4"])
        sink.abort()   // idempotent
    }

    func testWrongFrameSizeIsAnError() throws {
        let sink = try VideoSink(path: scratch.file("x.mp4"), width: 16, height: 16, fps: 5)
        defer { sink.abort() }
        XCTAssertThrowsError(try sink.write(frame(0, 8, 8), index: 0)) { e in
            XCTAssertEqual((e as? MediaError)?.message, "video '\(scratch.file("x.mp4"))': frame 0 is 8×8, not 16×16")
        }
    }

    func testMissingFolderIsAClearError() {
        let msg = mediaErrorMessage { try VideoSink(path: "/nonexistent-wobble/x.mp4", width: 8, height: 8, fps: 5) }
        XCTAssertEqual(msg, "output '/nonexistent-wobble/x.mp4': folder '/nonexistent-wobble' does not exist")
    }

    func testFFmpegFailureCarriesItsStderr() throws {
        // An ffmpeg that fails after reading a little: its status and its
        // stderr reach the caller, with no crash on the broken pipe.
        let bin = scratch.file("bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: false)
        try """
        #!/bin/sh
        case "$*" in *-encoders*) echo ' V....D libx264              fake H.264'; exit 0;; esac
        head -c 1000 >/dev/null
        echo 'fake ffmpeg: the disk is on fire' >&2
        exit 3
        """.write(toFile: bin + "/ffmpeg", atomically: false, encoding: .utf8)
        XCTAssertEqual(chmod(bin + "/ffmpeg", 0o755), 0)
        let saved = ProcessInfo.processInfo.environment["PATH"]
        setenv("PATH", bin, 1)
        defer { if let saved { setenv("PATH", saved, 1) } }
        let sink = try VideoSink(path: scratch.file("x.mp4"), width: 64, height: 64, fps: 5)
        var failure: Error?
        do {
            for k in 0..<200 { try sink.write(frame(k, 64, 64), index: k) }
            try sink.finish()
        } catch {
            failure = error
        }
        let message = (failure as? MediaError)?.message ?? "\(String(describing: failure))"
        XCTAssertTrue(message.hasPrefix("video '\(scratch.file("x.mp4"))': ffmpeg stopped taking frames (Broken pipe) (ffmpeg's exit status 3)"), message)
        XCTAssertTrue(message.hasSuffix("\n  ffmpeg: fake ffmpeg: the disk is on fire"), message)
        XCTAssertEqual(try scratch.list(), ["bin"], "no temporary file")
        sink.abort()
    }

    func testFolderRemovedWhileEncodingIsAnError() throws {
        // ffmpeg writes the file we hold open, so it succeeds; the commit
        // sees the folder is gone and fails instead of writing elsewhere.
        let sub = scratch.file("gone")
        try FileManager.default.createDirectory(atPath: sub, withIntermediateDirectories: false)
        let sink = try VideoSink(path: sub + "/x.mp4", width: 64, height: 64, fps: 5)
        try FileManager.default.removeItem(atPath: sub)
        let message = mediaErrorMessage {
            for k in 0..<10 { try sink.write(frame(k, 64, 64), index: k) }
            try sink.finish()
        }
        XCTAssertEqual(message, "output '\(sub)/x.mp4': the folder '\(sub)' was moved or removed during the render")
        XCTAssertFalse(FileManager.default.fileExists(atPath: sub))
    }

    func testMissingFFmpegMessage() throws {
        let saved = ProcessInfo.processInfo.environment["PATH"]
        setenv("PATH", scratch.path, 1)
        defer { if let saved { setenv("PATH", saved, 1) } }
        let msg = mediaErrorMessage { try VideoSink(path: scratch.file("x.mp4"), width: 8, height: 8, fps: 5) }
        XCTAssertEqual(msg, "video output needs ffmpeg, which is not installed (Debian: apt-get install ffmpeg); write a .gif or PNG frames instead")
    }

    func testRate() {
        XCTAssertEqual(VideoSink.rate(30), "30")
        XCTAssertEqual(VideoSink.rate(29.97), "2997/100")
        XCTAssertEqual(VideoSink.rate(1.0 / 3), "1/3", "a frame lasts exactly 3 s")
        XCTAssertEqual(VideoSink.rate(4.0 / 3), "4/3")
    }
}
