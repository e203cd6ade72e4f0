import WobbleCore
import WobbleSystem

/// Sound files decoded by ffmpeg (a process, through `ChildProcess`): any
/// format ffmpeg reads (WAV, FLAC, MP3, Ogg Vorbis/Opus, AAC/M4A, a
/// video's first audio stream), resampled by ffmpeg to 44 100 Hz 32-bit
/// float, every channel kept; the mono signal analysed is the mean of the
/// channels (so a sine of amplitude 0.5 in every channel is a sine of
/// amplitude 0.5, whatever the channel count). Lua's `sound(path)`.
///
/// ffmpeg's output is read as it comes and folded into the mono samples
/// at once: the only memory that grows with the sound is its samples
/// (4 bytes a sample, 10.6 MB a minute), held in checked memory, so a
/// sound too long for the memory allowed is one error, not a trap.
public enum AudioDecoder {
    /// The sample rate of decoded sounds.
    public static let sampleRate = 44_100
    /// How long decoding may take (a sound as long as the longest clip
    /// decodes in seconds; an ffmpeg that hangs must not hang the run).
    static let timeout = 120.0

    /// The mono samples of `path`; at most `maxSeconds` (+1 s, so that a
    /// longer sound is seen as longer) are decoded.
    ///
    /// - Throws: `MediaError` naming the file: no such file, no ffmpeg,
    ///   not a sound ffmpeg can decode, ffmpeg too slow or interrupted,
    ///   too long for the memory allowed.
    public static func decode(path: String, maxSeconds: Double) throws -> CheckedArray<Float> {
        let shown = PathBytes.display(path)
        guard Posix.kind(path) != nil else { throw MediaError("'\(shown)': no such file") }
        guard let ffmpeg = ChildProcess.findExecutable("ffmpeg") else {
            throw MediaError("'\(shown)': decoding a sound needs ffmpeg, which is not installed (Debian: apt-get install ffmpeg)")
        }
        let seconds = min(max(0, maxSeconds) + 1, 1e7)
        let args = ["-hide_banner", "-nostdin", "-nostats", "-loglevel", "error",
                    "-i", "file:" + path, "-vn", "-map", "0:a:0", "-ar", String(sampleRate),
                    "-t", String(format: "%.3f", seconds), "-map_metadata", "-1", "-flags", "+bitexact", "-fflags", "+bitexact",
                    "-c:a", "pcm_f32le", "-f", "wav", "pipe:1"]
        let limit = ChildProcess.answerTimeout(timeout)
        var reader = WAVStreamReader(maxFrames: Int(seconds * Double(sampleRate)))
        // ffmpeg's messages, to tell a refusal of memory from a bad file.
        let messages = try? ScratchFile(inMemory: true, shown: "ffmpeg's messages")
        let result: Result<ChildProcess.Status, ChildProcess.Failure>
        do {
            result = try ChildProcess.stream(ffmpeg, args, timeout: limit.seconds, stderr: messages?.fd) { try reader.consume($0) }
        } catch let e as MemoryRefused {
            let seconds = Double(reader.samples.count) / Double(sampleRate)
            throw MediaError("'\(shown)': out of memory after \(NumberText.seconds(seconds.rounded())) s of it (\(MemoryRefused.shown(reader.bytesHeld)) of samples held, \(MemoryRefused.shown(e.bytes)) more refused): the sound is too long for the memory allowed")
        } catch is WAVStreamReader.Malformed {
            throw MediaError("'\(shown)': ffmpeg's decoded stream could not be read (not 32-bit float WAV)")
        }
        switch result {
        case .success(let status):
            // 127: the loader could not start it (under `ulimit -v`, ffmpeg's
            // own libraries need some 200 MB of address space).
            if status == .exited(127) {
                throw MediaError("'\(shown)': ffmpeg ('\(ffmpeg)') could not start (exit 127: its libraries could not be loaded; too little memory allowed?)")
            }
            if case .signalled(let signal) = status {
                throw MediaError("'\(shown)': ffmpeg was killed (signal \(signal)) while decoding it")
            }
            if status != .exited(0), let messages, AudioDecoder.tail(messages).contains("Cannot allocate memory") {
                throw MediaError("'\(shown)': ffmpeg ran out of memory decoding it: the sound is too long for the memory allowed")
            }
            guard status == .exited(0), reader.isComplete else {
                throw MediaError("'\(shown)' is not a sound ffmpeg can decode (no audio stream, or a damaged or unknown format)")
            }
        case .failure(.timedOut): throw MediaError("'\(shown)': ffmpeg did not decode it within \(limit.shown)")
        case .failure(.interrupted): throw MediaError("'\(shown)': interrupted while decoding")
        case .failure(.notStarted): throw MediaError("'\(shown)': ffmpeg ('\(ffmpeg)') could not be run (too few processes or open files allowed?)")
        }
        return reader.samples.finish()
    }

    /// The last 16 kB of what a child wrote into `file`.
    static func tail(_ file: ScratchFile) -> String {
        guard let size = try? file.size(shown: "ffmpeg's messages") else { return "" }
        var bytes = [UInt8](repeating: 0, count: min(size, 16 << 10))
        let n = bytes.withUnsafeMutableBytes { (try? Posix.pread(file.fd, into: $0, at: size - $0.count, shown: "ffmpeg's messages")) ?? 0 }
        return String(decoding: bytes.prefix(n), as: UTF8.self)
    }
}

/// Reads the WAV stream ffmpeg writes to a pipe (`-c:a pcm_f32le -f wav`:
/// the RIFF header, a `fmt ` chunk with the channel count, a `data` chunk
/// whose size is unknown, read to the end) and folds each frame's
/// channels into their mean as it arrives.
struct WAVStreamReader {
    struct Malformed: Error {}

    let maxFrames: Int
    private(set) var samples = CheckedArrayBuilder<Float>()
    private var header: [UInt8] = []
    private var channels = 0
    private var inData = false
    /// Bytes of a frame split across two reads.
    private var partial: [UInt8] = []

    init(maxFrames: Int) { self.maxFrames = maxFrames }

    /// Whether the header was read (a stream with no audio stops before).
    var isComplete: Bool { inData }
    var bytesHeld: Int { samples.count * 4 }

    mutating func consume(_ bytes: UnsafeRawBufferPointer) throws {
        if inData {
            try fold(bytes)
            return
        }
        header += bytes
        guard header.count <= 1 << 20 else { throw Malformed() }
        // RIFF, size, WAVE, then chunks (id, size, body) up to `data`.
        guard header.count >= 12 else { return }
        guard header[0..<4].elementsEqual("RIFF".utf8), header[8..<12].elementsEqual("WAVE".utf8) else { throw Malformed() }
        var at = 12
        while at + 8 <= header.count {
            let id = header[at..<(at + 4)]
            let size = Int(u32(at + 4))
            if id.elementsEqual("data".utf8) {
                guard channels > 0 else { throw Malformed() }
                inData = true
                let rest = Array(header[(at + 8)...])
                header = []
                try rest.withUnsafeBytes { try fold($0) }
                return
            }
            guard at + 8 + size <= header.count else { return }
            if id.elementsEqual("fmt ".utf8) {
                guard size >= 16 else { throw Malformed() }
                let format = u16(at + 8), bits = u16(at + 22)
                // 3: IEEE float; 0xFFFE: extensible (its sub-format is float: pcm_f32le is asked for).
                guard format == 3 || format == 0xFFFE, bits == 32 else { throw Malformed() }
                channels = Int(u16(at + 10))
                guard channels > 0 else { throw Malformed() }
            }
            at += 8 + size + (size & 1)
        }
    }

    private func u16(_ i: Int) -> Int { Int(header[i]) | Int(header[i + 1]) << 8 }
    private func u32(_ i: Int) -> UInt32 {
        UInt32(header[i]) | UInt32(header[i + 1]) << 8 | UInt32(header[i + 2]) << 16 | UInt32(header[i + 3]) << 24
    }

    /// Frames of `channels` little-endian floats → their mean (non-finite
    /// values count as 0), up to `maxFrames`.
    private mutating func fold(_ bytes: UnsafeRawBufferPointer) throws {
        let frameBytes = channels * 4
        var input = bytes
        if !partial.isEmpty {
            let take = min(frameBytes - partial.count, input.count)
            partial += input[0..<take]
            input = UnsafeRawBufferPointer(rebasing: input[take...])
            guard partial.count == frameBytes else { return }
            let p = partial
            partial = []
            try p.withUnsafeBytes { try append($0) }
        }
        let whole = input.count / frameBytes * frameBytes
        try append(UnsafeRawBufferPointer(rebasing: input[0..<whole]))
        partial += input[whole...]
    }

    private mutating func append(_ frames: UnsafeRawBufferPointer) throws {
        let c = channels
        let n = min(frames.count / (c * 4), maxFrames - samples.count)
        guard n > 0 else { return }
        try samples.append(n) { out in
            for i in 0..<n {
                var sum = 0.0
                for k in 0..<c {
                    // (f32le is the machine's order on every platform we build for.)
                    let x = frames.loadUnaligned(fromByteOffset: (i * c + k) * 4, as: Float.self)
                    sum += x.isFinite ? Double(x) : 0
                }
                out[i] = Float(sum / Double(c))
            }
        }
    }
}
