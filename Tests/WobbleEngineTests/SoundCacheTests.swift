import Foundation
import XCTest
import Glibc
import WobbleEngine
import WobbleAudio
import WobbleCore
import WobbleScript

/// A live session decodes a sound once: reruns (each drag step, poke or
/// reload in the studio) take the samples from its cache while the file
/// is the same, and decode again when the file changes.
final class SoundCacheTests: SessionTestCase {
    func testARerunDoesNotDecodeTheSoundAgainUntilTheFileChanges() throws {
        let wavPath = dir.appendingPathComponent("beat.wav").path
        let samples = (0..<22_050).map { Float(sin(Double($0) * 0.05) * 0.5) }
        try Data(WAVFile.encode(samples, sampleRate: 44_100)).write(to: URL(fileURLWithPath: wavPath))
        let s = LiveSession(options: SessionOptions(scenePath: try scene("""
        image("img.png")
        local beat = sound("beat.wav")
        assert(beat.duration >= 0.5 - 1e-6)
        addSketch{x = 2, y = 2, w = 36, h = 26}
        prepare()
        wait(0.5)
        """)))
        XCTAssertTrue(s.run(), s.error?.message ?? "")
        // Without ffmpeg on the PATH a decode would fail: the rerun does not decode.
        let path = String(cString: getenv("PATH"))
        setenv("PATH", dir.path, 1)
        defer { setenv("PATH", path, 1) }
        XCTAssertTrue(s.performing([PerformedEvent(time: 0.1, action: .touch(from: .init(20, 15), to: .init(25, 15)))]), s.error?.message ?? "")
        XCTAssertTrue(s.run(), s.error?.message ?? "")
        // A new file (another stamp) is decoded again: here that fails for want of ffmpeg.
        try Data(WAVFile.encode(samples + samples, sampleRate: 44_100)).write(to: URL(fileURLWithPath: wavPath))
        XCTAssertFalse(s.run())
        XCTAssertTrue((s.error?.message ?? "").contains("decoding a sound needs ffmpeg, which is not installed"), s.error?.message ?? "")
        setenv("PATH", path, 1)
        XCTAssertTrue(s.run(), s.error?.message ?? "")
    }
}
