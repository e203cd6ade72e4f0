import WobbleSystem

/// Sound files decoded by ffmpeg (a process, through `ChildProcess`): any
/// format ffmpeg reads (WAV, FLAC, MP3, Ogg Vorbis/Opus, AAC/M4A, a
/// video's first audio stream), as mono 32-bit float samples at 44 100 Hz
/// (ffmpeg downmixes and resamples). Lua's `sound(path)`.
public enum AudioDecoder {
    /// The sample rate of decoded sounds.
    public static let sampleRate = 44_100
    /// How long decoding may take (a sound as long as the longest clip
    /// decodes in seconds; an ffmpeg that hangs must not hang the run).
    static let timeout = 120.0

    /// The samples of `path`; at most `maxSeconds` (+1 s, so that a
    /// longer sound is seen as longer) are decoded.
    ///
    /// - Throws: `MediaError` naming the file: no such file, no ffmpeg,
    ///   not a sound ffmpeg can decode, ffmpeg too slow or interrupted.
    public static func decode(path: String, maxSeconds: Double) throws -> [Float] {
        let shown = PathBytes.display(path)
        guard Posix.kind(path) != nil else { throw MediaError("'\(shown)': no such file") }
        guard let ffmpeg = ChildProcess.findExecutable("ffmpeg") else {
            throw MediaError("'\(shown)': decoding a sound needs ffmpeg, which is not installed (Debian: apt-get install ffmpeg)")
        }
        let seconds = min(max(0, maxSeconds) + 1, 1e7)
        let bytes = Int(seconds * Double(sampleRate)) * 4 + 4096
        let args = ["-hide_banner", "-nostdin", "-nostats", "-loglevel", "error",
                    "-i", "file:" + path, "-vn", "-map", "0:a:0", "-ac", "1", "-ar", String(sampleRate),
                    "-t", String(format: "%.3f", seconds), "-c:a", "pcm_f32le", "-f", "f32le", "pipe:1"]
        let limit = ChildProcess.answerTimeout(timeout)
        let output: ChildProcess.Output
        switch ChildProcess.output(ffmpeg, args, timeout: limit.seconds, limit: bytes) {
        case .success(let o): output = o
        case .failure(.timedOut): throw MediaError("'\(shown)': ffmpeg did not decode it within \(limit.shown)")
        case .failure(.interrupted): throw MediaError("'\(shown)': interrupted while decoding")
        case .failure(.notStarted): throw MediaError("'\(shown)': ffmpeg ('\(ffmpeg)') could not be run (too few processes or open files allowed?)")
        }
        guard output.status == .exited(0) else {
            throw MediaError("'\(shown)' is not a sound ffmpeg can decode (no audio stream, or a damaged or unknown format)")
        }
        let count = output.stdout.count / 4
        var samples = [Float](repeating: 0, count: count)
        samples.withUnsafeMutableBytes { dst in
            output.stdout.withUnsafeBytes { src in dst.copyMemory(from: UnsafeRawBufferPointer(rebasing: src[0..<(count * 4)])) }
        }
        // (f32le is the machine's order on every platform we build for.)
        return samples.map { $0.isFinite ? $0 : 0 }
    }
}
