import Dispatch
import Foundation
import WobbleCore
@testable import WobbleMedia
import WobbleSystem
import XCTest

/// Every sink writes through a `ByteStream`, and the same frames give the
/// same bytes whichever stream takes them: memory, an atomic file, and a
/// real pipe read by another thread (GIF, WebP, APNG, and video through
/// ffmpeg, whose container is written to a seekable scratch file and
/// copied into a stream that cannot seek). A stream aborted leaves
/// nothing: no file, no temporary file, no bytes.
final class ByteStreamSinkTests: XCTestCase {
    var scratch: Scratch!
    let w = 40, h = 30

    override func setUpWithError() throws { scratch = try Scratch() }

    /// The still: a gradient with a transparent corner.
    var still: RGBAImage {
        var img = RGBAImage(width: w, height: h)
        for y in 0 ..< h {
            for x in 0 ..< w {
                let i = (y * w + x) * 4
                img.pixels[i] = UInt8(x * 6)
                img.pixels[i + 1] = UInt8(y * 8)
                img.pixels[i + 2] = UInt8((x * y) & 255)
                img.pixels[i + 3] = x > 32 && y < 6 ? 0 : 255
            }
        }
        return img
    }

    /// Twelve frames: a block that moves right and changes colour over the still.
    func frames() -> [RGBAImage] {
        (0 ..< 12).map { k in
            var img = still
            for y in 8 ..< 20 {
                for x in (2 + 2 * k) ..< (12 + 2 * k) {
                    let i = (y * w + x) * 4
                    img.pixels[i] = 220
                    img.pixels[i + 1] = UInt8(k * 20)
                    img.pixels[i + 2] = UInt8((x + y) * 3)
                    img.pixels[i + 3] = 255
                }
            }
            return img
        }
    }

    /// Writes the frames through the sink `make` builds on `stream`; the
    /// size the sink reports.
    func write(_ make: (ByteStream) throws -> FrameSink, to stream: ByteStream) throws -> Int? {
        let sink = try make(stream)
        for (k, f) in frames().enumerated() { try sink.write(f, index: k) }
        try sink.finish()
        return sink.bytesWritten
    }

    /// Reads a pipe to its end on another thread.
    final class PipeReader: @unchecked Sendable {
        let fd: Int32
        private let done = DispatchSemaphore(value: 0)
        private let lock = NSLock()
        private var data: [UInt8] = []

        init(_ fd: Int32) throws {
            self.fd = fd
            guard SystemThread.detach({ [self] in
                var buffer = [UInt8](repeating: 0, count: 4096)
                while let n = try? buffer.withUnsafeMutableBytes({ try Posix.read(fd, into: $0, shown: "pipe") }), n > 0 {
                    lock.lock()
                    data += buffer[0 ..< n]
                    lock.unlock()
                }
                Posix.closeQuietly(fd)
                done.signal()
            }) else { throw XCTSkip("no thread to read the pipe") }
        }

        /// Everything read, once the writer closed its end.
        func bytes() -> [UInt8] {
            done.wait()
            lock.lock()
            defer { lock.unlock() }
            return data
        }
    }

    /// The bytes the sink writes to memory, to a file and to a pipe.
    func threeWays(_ name: String, _ make: (ByteStream) throws -> FrameSink,
                   file: StaticString = #filePath, line: UInt = #line) throws -> [UInt8] {
        let memory = MemoryStream(shown: name)
        let memorySize = try write(make, to: memory)
        let inMemory = memory.bytes

        let path = scratch.path(name)
        let fileSize = try write(make, to: try ByteStreams.open(path))
        let onDisk = try readBytes(path)

        let fds = try Posix.pipe(shown: "pipe")
        let reader = try PipeReader(fds.read)
        let pipeSize = try write(make, to: DescriptorStream(fd: fds.write, shown: "pipe"))
        let piped = reader.bytes()

        XCTAssertGreaterThan(inMemory.count, 100, name, file: file, line: line)
        XCTAssertTrue(inMemory == onDisk, "\(name): \(inMemory.count) bytes in memory, \(onDisk.count) in the file", file: file, line: line)
        XCTAssertTrue(inMemory == piped, "\(name): \(inMemory.count) bytes in memory, \(piped.count) through the pipe", file: file, line: line)
        XCTAssertEqual([memorySize, fileSize, pipeSize], [inMemory.count, inMemory.count, inMemory.count], name, file: file, line: line)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: scratch.path).sorted(), [name],
                       "\(name): the file only, no temporary file", file: file, line: line)
        try FileManager.default.removeItem(atPath: path)
        return inMemory
    }

    func testGIFWritesTheSameBytesToMemoryAFileAndAPipe() throws {
        let s = still, w = self.w, h = self.h
        let gif = try threeWays("clip.gif") { try GIFSink(stream: $0, shown: "clip.gif", width: w, height: h, fps: 30, still: s) }
        XCTAssertEqual(Array(gif.prefix(6)), Array("GIF89a".utf8))
        XCTAssertEqual(gif.last, 0x3B, "the trailer")
    }

    func testWebPWritesTheSameBytesToMemoryAFileAndAPipe() throws {
        let w = self.w, h = self.h
        let webp = try threeWays("clip.webp") { try WebPSink(stream: $0, shown: "clip.webp", width: w, height: h, fps: 30) }
        XCTAssertEqual(Array(webp[8 ..< 12]), Array("WEBP".utf8))
    }

    func testAPNGWritesTheSameBytesToMemoryAFileAndAPipe() throws {
        let w = self.w, h = self.h
        let apng = try threeWays("clip.apng") {
            try APNGSink(stream: $0, shown: "clip.apng", width: w, height: h, fps: 30, frameCount: 12)
        }
        XCTAssertEqual(Array(apng.prefix(8)), APNGChunks.signature)
        XCTAssertEqual(Array(apng.suffix(8).prefix(4)), Array("IEND".utf8))
    }

    /// Video: ffmpeg writes a seekable container whatever the stream (an
    /// MP4 with its index first, not a fragmented one for a pipe), so a
    /// pipe gets the file's bytes.
    func testVideoWritesTheSameBytesToMemoryAFileAndAPipe() throws {
        guard ChildProcess.findExecutable("ffmpeg") != nil else { throw XCTSkip("ffmpeg is not installed") }
        let w = self.w, h = self.h
        let mp4 = try threeWays("clip.mp4") { try VideoSink(stream: $0, shown: "clip.mp4", width: w, height: h, fps: 30) }
        XCTAssertEqual(String(decoding: mp4[4 ..< 8], as: UTF8.self), "ftyp")
        XCTAssertNotNil(String(decoding: mp4.prefix(4096), as: UTF8.self).range(of: "moov"), "the index before the frames")
        XCTAssertNil(String(decoding: mp4, as: UTF8.self).range(of: "moof"), "not fragmented")
        let webm = try threeWays("clip.webm") {
            try VideoSink(stream: $0, shown: "clip.webm", width: w, height: h, fps: 30, format: .webm)
        }
        XCTAssertEqual(Array(webm.prefix(4)), [0x1A, 0x45, 0xDF, 0xA3])
    }

    /// A sink aborted halfway: the file's target never appears (and no
    /// temporary file stays beside it), memory holds nothing, and a pipe's
    /// reader sees its end.
    func testAbortLeavesNothingInAnyStream() throws {
        let s = still, w = self.w, h = self.h
        let makers: [(String, (ByteStream) throws -> FrameSink)] = [
            ("gif", { try GIFSink(stream: $0, shown: "x", width: w, height: h, fps: 30, still: s) }),
            ("webp", { try WebPSink(stream: $0, shown: "x", width: w, height: h, fps: 30) }),
            ("apng", { try APNGSink(stream: $0, shown: "x", width: w, height: h, fps: 30, frameCount: 12) }),
        ] + (ChildProcess.findExecutable("ffmpeg") == nil ? [] : [
            ("mp4", { try VideoSink(stream: $0, shown: "x.mp4", width: w, height: h, fps: 30) }),
        ])
        for (name, make) in makers {
            let memory = MemoryStream()
            let a = try make(memory)
            for (k, f) in frames().prefix(5).enumerated() { try a.write(f, index: k) }
            a.abort()
            XCTAssertEqual(memory.bytes, [], name)
            XCTAssertNil(a.bytesWritten, name)

            let b = try make(try ByteStreams.open(scratch.path("out.\(name)")))
            for (k, f) in frames().prefix(5).enumerated() { try b.write(f, index: k) }
            b.abort()
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: scratch.path), [], name)

            let fds = try Posix.pipe(shown: "pipe")
            let reader = try PipeReader(fds.read)
            let c = try make(DescriptorStream(fd: fds.write, shown: "pipe"))
            for (k, f) in frames().prefix(5).enumerated() { try c.write(f, index: k) }
            c.abort()
            _ = reader.bytes()   // returns: the write end was closed
        }
    }

    /// A memory stream is sealed by `commit()`; writing after it is one clear error.
    func testAMemoryStreamAfterCommitRefusesWrites() throws {
        let m = MemoryStream(shown: "try")
        try m.write([1, 2, 3])
        try m.commit()
        XCTAssertEqual(m.committedSize, 3)
        XCTAssertEqual(mediaErrorMessage { try m.write([4]) }, "output 'try': written after it was closed")
        XCTAssertEqual(m.take(), [1, 2, 3])
    }

    /// A capped memory stream keeps its bytes up to the cap, and past it
    /// only their count: the size is still exact.
    func testACappedMemoryStreamKeepsOnlyTheSizePastItsCap() throws {
        let fits = MemoryStream(shown: "try", cap: 4)
        try fits.write([1, 2])
        try fits.write([3, 4])
        try fits.commit()
        XCTAssertFalse(fits.overflowed)
        XCTAssertEqual(fits.take(), [1, 2, 3, 4])
        let over = MemoryStream(shown: "try", cap: 4)
        try over.write([1, 2, 3])
        try over.write([4, 5])
        try over.write([6])
        try over.commit()
        XCTAssertTrue(over.overflowed)
        XCTAssertEqual(over.bytes, [])
        XCTAssertEqual(over.committedSize, 6)
    }
}
