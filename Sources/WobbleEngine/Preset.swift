
import Foundation
import WobbleCore
import WobbleSystem
import WobbleMedia

/// A platform's published rules for animated stickers and emoji
/// (`--preset NAME`). The figures and their sources are in docs/CLI.md
/// ("Where clips go").
package struct Preset: Equatable, Sendable {
    /// How the frame is sized.
    package enum Fit: Equatable, Sendable {
        /// Exactly N×N: the picture scaled to fit, centred, padded with transparency.
        case square(Int)
        /// The longer side exactly N, the other N or less (no padding).
        case longSide(Int)
        /// Within W×H, scaled to touch the box (one side W or H).
        case within(Int, Int)
    }

    /// How many times the platform plays a sticker, and so what `--loop`
    /// may ask for.
    package enum Plays: Equatable, Sendable {
        /// Whatever `--loop` says (default: forever).
        case any
        /// Always forever (the player loops; the file has no loop count):
        /// only `--loop 0`.
        case forever
        /// A number of plays in `range`, all of them within `seconds`
        /// (LINE); without `--loop`, as many as fit.
        case within(ClosedRange<Int>, seconds: Double)
    }

    package let name: String
    /// What the platform calls the thing.
    package let what: String
    /// The formats the platform takes, the usual one first; with more than
    /// one, the search writes each and keeps the one closest to the frames
    /// (PSNR) within the byte limit.
    package let formats: [OutputFormat]
    package let fit: Fit
    /// The highest frame rate (frames are slowed to it).
    package let maxFPS: Double
    /// The longest clip, in seconds (one play, as a player plays it: every
    /// frame's delay, the last frame's too).
    package let maxDuration: Double?
    /// The frame counts allowed.
    package let frames: ClosedRange<Int>?
    /// The file size limit in bytes.
    package let byteLimit: Int
    package let plays: Plays
    /// Where the figures come from.
    package let source: String

    /// The usual format.
    package var format: OutputFormat { formats[0] }

    package static let all: [Preset] = [
        Preset(name: "telegram", what: "Telegram video stickers", formats: [.webm], fit: .longSide(512), maxFPS: 30,
               maxDuration: 3, frames: nil, byteLimit: 256 * 1024, plays: .forever,
               source: "https://core.telegram.org/stickers#video-stickers-and-emoji"),
        Preset(name: "whatsapp", what: "WhatsApp animated stickers", formats: [.webp], fit: .square(512), maxFPS: 125,
               maxDuration: 10, frames: nil, byteLimit: 500 * 1024, plays: .any,
               source: "https://github.com/WhatsApp/stickers/blob/main/Android/README.md"),
        Preset(name: "discord", what: "Discord stickers", formats: [.apng, .gif], fit: .square(320), maxFPS: 60,
               maxDuration: nil, frames: nil, byteLimit: 512 * 1024, plays: .any,
               source: "https://support.discord.com/hc/en-us/articles/4402687377815-Discord-Stickers-FAQ"),
        Preset(name: "line", what: "LINE animated stickers", formats: [.apng], fit: .within(320, 270), maxFPS: 60,
               maxDuration: 4, frames: 5...20, byteLimit: 300 * 1024, plays: .within(1...4, seconds: 4),
               source: "https://creator.line.me/en/guideline/animationsticker/"),
        Preset(name: "slack", what: "Slack custom emoji", formats: [.gif], fit: .square(128), maxFPS: 50,
               maxDuration: nil, frames: nil, byteLimit: 128 * 1024, plays: .any,
               source: "https://slack.com/help/articles/206870177-Add-custom-emoji-and-aliases-to-your-workspace"),
    ]

    /// The names, for help and messages.
    package static let names = all.map(\.name).joined(separator: "|")

    /// The preset called `name`; an unknown one is a usage error listing the known.
    package static func named(_ name: String) throws -> Preset {
        guard let p = all.first(where: { $0.name == name.lowercased() }) else {
            throw UsageError("--preset: '\(name)' is not a known platform; use one of \(all.map(\.name).joined(separator: ", "))")
        }
        return p
    }

    /// The size rule in words.
    package var describeFit: String {
        switch fit {
        case .square(let n): "\(n)×\(n), padded with transparency"
        case .longSide(let n): "\(n) px on the longer side"
        case .within(let w, let h): "within \(w)×\(h)"
        }
    }

    /// The file name's extension for `format` when `-o` is not given
    /// (APNG stickers are uploaded as `.png`).
    package static func fileExtension(_ format: OutputFormat) -> String { format == .apng ? ".png" : format.extensions.first ?? "" }

    /// The highest frame rate for `formats`: the platform's, and for GIF
    /// 50 (browsers play GIF delays under 2 centiseconds as 10).
    package func maxFPS(_ formats: [OutputFormat]) -> Double { formats.contains(.gif) ? min(maxFPS, 50) : maxFPS }

    /// How long one play of `n` frames at `fps` lasts as a player plays
    /// `format`: every frame's delay, summed. GIF: whole centiseconds
    /// (frame k lasts `round(100(k+1)/fps) - round(100k/fps)`), WebP whole
    /// milliseconds (`AnimationTiming`), video as ffmpeg is given the rate
    /// (`VideoSink.duration`), APNG exactly n/fps.
    package static func played(frames n: Int, fps: Double, format: OutputFormat) -> Double {
        switch format {
        case .gif: (100 * Double(n) / fps).rounded() / 100
        case .webp: Double(AnimationTiming.millisecond(index: n, fps: fps)) / 1000
        case let f where f.video != nil: VideoSink.duration(frames: n, fps: fps)
        default: Double(n) / fps
        }
    }

    /// The names of `formats`, for messages: `APNG or GIF`.
    package static func spelled(_ formats: [OutputFormat]) -> String {
        formats.map { $0.rawValue.uppercased() }.joined(separator: " or ")
    }

    /// The picture size (scaled, before padding) and the canvas size for a
    /// `w × h` source.
    package func size(sourceWidth w: Int, sourceHeight h: Int) -> (picture: (Int, Int), canvas: (Int, Int)) {
        func scaled(_ bw: Int, _ bh: Int) -> (Int, Int) {
            let s = min(Double(bw) / Double(w), Double(bh) / Double(h))
            return (max(1, min(bw, Int((Double(w) * s).rounded()))), max(1, min(bh, Int((Double(h) * s).rounded()))))
        }
        switch fit {
        case .square(let n):
            return (scaled(n, n), (n, n))
        case .longSide(let n):
            let p = scaled(n, n)
            return (p, p)
        case .within(let bw, let bh):
            let p = scaled(bw, bh)
            return (p, p)
        }
    }
}
