import Foundation
import XCTest
import WobbleAudio
import WobbleSystem
import WobbleTestSupport

/// The analysis hears the mean of a sound's channels, whatever their
/// count, and a sound too long for the memory allowed is one line, not a
/// trap.
extension SoundE2ETests {
    /// A 16-bit PCM WAV of `channels` (one array of samples each, of equal length).
    static func wav(_ channels: [[Float]], sampleRate: Int = 44_100) -> Data {
        var out = Data()
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { out += $0 } }
        func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { out += $0 } }
        let c = channels.count, n = channels[0].count
        let data = UInt32(n * c * 2)
        out += Array("RIFF".utf8); u32(36 + data); out += Array("WAVE".utf8)
        out += Array("fmt ".utf8); u32(16); u16(1); u16(UInt16(c)); u32(UInt32(sampleRate))
        u32(UInt32(sampleRate * c * 2)); u16(UInt16(c * 2)); u16(16)
        out += Array("data".utf8); u32(data)
        for i in 0..<n {
            for ch in channels {
                u16(UInt16(bitPattern: Int16(max(-32767, min(32767, (Double(ch[i]) * 32767).rounded())))))
            }
        }
        return out
    }

    /// A sine of amplitude 0.5 in every channel reads as one (RMS 0.354)
    /// at 1, 2, 6 and 8 channels; the onsets, beats and tempo of drums
    /// in every channel are the mono file's; a stereo file with the sine
    /// on the left only reads as half the sine (the mean of the channels).
    func testTheLevelAndTimesAreTheSameAtEveryChannelCount() throws {
        let n = 44_100
        let sine = (0..<n).map { Float(0.5 * sin(2 * Double.pi * 441 * Double($0) / 44_100)) }
        let drums = DrumSynth.drums(bpm: 120, bars: 2).samples
        for c in [1, 2, 6, 8] {
            try Self.wav([[Float]](repeating: sine, count: c)).write(to: box.url.appendingPathComponent("sine\(c).wav"))
            try Self.wav([[Float]](repeating: drums, count: c)).write(to: box.url.appendingPathComponent("drums\(c).wav"))
        }
        try Self.wav([sine, [Float](repeating: 0, count: n)]).write(to: box.url.appendingPathComponent("left.wav"))
        try box.write("levels.lua", """
            image("img.png")
            for _, c in ipairs{1, 2, 6, 8} do
              local s = sound("sine" .. c .. ".wav")
              print(string.format("%d %.6f %.6f", c, s:level(0, 1), s:level(0.25, 0.5)))
              local d = sound("drums" .. c .. ".wav")
              print(table.concat(d:onsets(), " ") .. " | " .. table.concat(d:beats(), " ") .. " | " .. d:tempo())
            end
            print(string.format("left %.6f", sound("left.wav"):level(0, 1)))
            """)
        let r = try Tool.run(["levels.lua", "--check"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 9, "\(lines)")
        guard lines.count == 9 else { return }
        let quantised = Double(Int16((0.5 * 32767).rounded())) / 32767   // the 16-bit sine's amplitude
        for (k, c) in [1, 2, 6, 8].enumerated() {
            let fields = lines[2 * k].split(separator: " ")
            XCTAssertEqual(fields.first.map(String.init), "\(c)")
            for f in fields.dropFirst() {
                XCTAssertEqual(Double(f) ?? -1, quantised / 2.squareRoot(), accuracy: 1e-4, "\(c) channels: \(lines[2 * k])")
            }
            XCTAssertEqual(lines[2 * k], "\(c)" + lines[0].dropFirst(), "\(c) channels: the same digits as mono")
            XCTAssertEqual(lines[2 * k + 1], lines[1], "\(c) channels: the drums' times")
        }
        XCTAssertTrue(lines[1].hasPrefix("0.09 0.34 0.59 0.84 1.09"), lines[1])
        XCTAssertEqual(Double(lines[8].dropFirst(5)) ?? -1, quantised / 2 / 2.squareRoot(), accuracy: 1e-4, lines[8])
    }

    /// A 30 minute sound under `ulimit -v`: the analysis holds its samples
    /// once (4 bytes each, no copy), so at the 1.2 GB it loads;
    /// with less memory than the samples need, or than ffmpeg needs to
    /// start, it is one line and exit 1.
    /// Never a trap (`Fatal error: failed to allocate`, SIGABRT).
    func testALongSoundUnderAMemoryLimitLoadsOrFailsWithOneLine() throws {
        let made = try Tool.exec("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=f=220:r=8000:d=1800", "-c:a", "flac",
                                            box.path("long.flac")])
        XCTAssertEqual(made.status, 0, made.stderr)
        try box.write("long.lua", """
            image("img.png")
            local s = sound("long.flac")
            print(s.duration, string.format("%.4f", s:level(600, 601)))
            """)
        func run(_ kilobytes: Int) throws -> (status: Int32, stdout: String, stderr: String) {
            let r = try Tool.exec("/bin/bash", ["-c", "ulimit -v \(kilobytes) && exec \"$0\" long.lua --check", Tool.executable.path],
                                  cwd: box.url)
            return (r.status, String(decoding: r.stdout, as: UTF8.self), r.stderr)
        }
        // 1.2 GB: room for the 317 MB of samples.
        let roomy = try run(1_200_000)
        XCTAssertEqual(roomy.status, 0, roomy.stderr)
        // ffmpeg's `sine` has an amplitude of 1/8.
        let fields = roomy.stdout.split(whereSeparator: { $0 == "\t" || $0 == "\n" }).map(String.init)
        XCTAssertEqual(fields.first, "1800.0", roomy.stdout)
        XCTAssertEqual(Double(fields.last ?? "") ?? -1, 0.125 / 2.squareRoot(), accuracy: 0.001, roomy.stdout)
        // 300 MB: less than the samples alone (317 MB).
        let tight = try run(300_000)
        XCTAssertEqual(tight.status, 1, tight.stderr)
        let first = String(tight.stderr.split(separator: "\n").first ?? "")
        XCTAssertTrue(first.hasPrefix("long.lua:2: sound: 'long.flac': out of memory "), tight.stderr)
        XCTAssertTrue(first.hasSuffix(" refused): the sound is too long for the memory allowed"), tight.stderr)
        XCTAssertFalse(tight.stderr.contains("Fatal error"), tight.stderr)
        // 150 MB: too little for ffmpeg itself to start here (its libraries
        // take some 200 MB of address space); an ffmpeg that starts runs
        // out of memory as above.
        let tiny = try run(150_000)
        XCTAssertEqual(tiny.status, 1, tiny.stderr)
        let line = String(tiny.stderr.split(separator: "\n").first ?? "")
        let cannotStart = line.hasPrefix("long.lua:2: sound: 'long.flac': ffmpeg (")
            && line.hasSuffix(") could not start (exit 127: its libraries could not be loaded; too little memory allowed?)")
        let outOfMemory = line.hasPrefix("long.lua:2: sound: 'long.flac': out of memory ")
        XCTAssertTrue(cannotStart || outOfMemory, tiny.stderr)
        XCTAssertFalse(tiny.stderr.contains("Fatal error"), tiny.stderr)
    }
}
