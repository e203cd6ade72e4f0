import Foundation
import WobbleSystem

/// The soundtrack of a `--frames` slice rendered as PNG frames: the
/// samples of its frames' time span (`VideoSink.Audio.span`), as a 16-bit
/// stereo 48 kHz WAV `sound_NNNNN.wav` beside the frames (NNNNN: the
/// slice's first frame). `--assemble` joins the slices' samples end to end
/// (their bounds are rounded on one grid, so they tile the clip's samples
/// exactly: no gap, no overlap, no click) and muxes them once.
public enum AudioSlice {
    /// The file name of the slice whose first frame is `index`.
    public static func name(_ index: Int) -> String {
        let digits = String(index)
        return "sound_" + String(repeating: "0", count: max(0, 5 - digits.count)) + digits + ".wav"
    }

    /// The first frame of a slice file name (`sound_00010.wav` → 10), or nil.
    public static func index(ofName name: String) -> Int? {
        guard name.hasPrefix("sound_"), name.hasSuffix(".wav") else { return nil }
        let digits = name.dropFirst(6).dropLast(4)
        guard digits.count >= 5, digits.count <= 10, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(digits)
    }

    /// Bytes per sample frame (two channels of 16 bits).
    public static let frameBytes = 4

    /// Decodes `audio`'s span with ffmpeg into a WAV file's bytes, for the
    /// slice `shown` (`PNGSequenceSink` commits it with the frames).
    public static func wav(_ audio: VideoSink.Audio, shown path: String) throws -> [UInt8] {
        let shown = PathBytes.display(path)
        guard let ffmpeg = ChildProcess.findExecutable("ffmpeg") else {
            throw MediaError("sound slice '\(shown)': needs ffmpeg, which is not installed (Debian: apt-get install ffmpeg)")
        }
        let count = audio.span().count
        let args = ["-hide_banner", "-nostdin", "-nostats", "-loglevel", "error", "-i", "file:" + audio.path,
                    "-vn", "-map", "0:a:0", "-af", audio.filter, "-ar", String(VideoSink.Audio.rate), "-ac", "2",
                    "-c:a", "pcm_s16le", "-f", "s16le", "pipe:1"]
        let limit = ChildProcess.answerTimeout(120)
        guard case .success(let out) = ChildProcess.output(ffmpeg, args, timeout: limit.seconds, limit: count * frameBytes + 4096),
              out.status == .exited(0) else {
            throw MediaError("sound slice '\(shown)': ffmpeg could not decode the soundtrack '\(PathBytes.display(audio.path))'")
        }
        var pcm = out.stdout
        // Exactly the span (the filter pads and trims; this is a guard).
        if pcm.count > count * frameBytes { pcm.removeLast(pcm.count - count * frameBytes) }
        if pcm.count < count * frameBytes { pcm += [UInt8](repeating: 0, count: count * frameBytes - pcm.count) }
        return wav(pcm: pcm)
    }

    /// A WAV file (16-bit stereo at 48 kHz) around `pcm`.
    public static func wav(pcm: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(44 + pcm.count)
        func u32(_ v: Int) { for i in 0..<4 { out.append(UInt8((v >> (8 * i)) & 0xFF)) } }
        func u16(_ v: Int) { for i in 0..<2 { out.append(UInt8((v >> (8 * i)) & 0xFF)) } }
        let rate = VideoSink.Audio.rate
        out += Array("RIFF".utf8); u32(36 + pcm.count); out += Array("WAVE".utf8)
        out += Array("fmt ".utf8); u32(16); u16(1); u16(2); u32(rate); u32(rate * frameBytes); u16(frameBytes); u16(16)
        out += Array("data".utf8); u32(pcm.count)
        return out + pcm
    }

    /// The samples of a slice file this program wrote (16-bit stereo at
    /// 48 kHz, PCM), as bytes; anything else is an error naming it.
    /// A device is refused before it is opened (`/dev/zero` never ends); a
    /// FIFO is read (the caller puts the read under `--timeout`).
    public static func readPCM(_ path: String) throws -> [UInt8] {
        let shown = PathBytes.display(path)
        let prefix = "sound slice '\(shown)': "
        if let kind = Posix.kind(path), kind == .characterDevice || kind == .blockDevice || kind == .directory || kind == .socket {
            throw MediaError(prefix + "\(kind.described), not a WAV file")
        }
        let bytes: [UInt8]
        do {
            bytes = try Posix.readFile(path, limit: ImageIO.maxFileSize)
        } catch let e as PosixError {
            if e.code == ENOENT { throw MediaError(prefix + "no such file") }
            throw MediaError(prefix + "cannot read: " + Posix.reason(e.code))
        } catch is FileTooLarge {
            throw MediaError(prefix + "the file is larger than \(ImageIO.maxFileSize >> 20) MiB")
        }
        func u32(_ i: Int) -> Int { (0..<4).reduce(0) { $0 | Int(bytes[i + $1]) << (8 * $1) } }
        guard bytes.count >= 44, Array(bytes[0..<4]) == Array("RIFF".utf8), Array(bytes[8..<12]) == Array("WAVE".utf8),
              Array(bytes[12..<16]) == Array("fmt ".utf8), Array(bytes[36..<40]) == Array("data".utf8),
              bytes[22] == 2, u32(24) == VideoSink.Audio.rate, bytes[34] == 16 else {
            throw MediaError("sound slice '\(shown)': not a 16-bit stereo 48 kHz WAV as wobble-run writes them")
        }
        let size = u32(40)
        guard size % frameBytes == 0, 44 + size <= bytes.count else {
            throw MediaError("sound slice '\(shown)': its samples are cut off")
        }
        return Array(bytes[44..<(44 + size)])
    }
}
