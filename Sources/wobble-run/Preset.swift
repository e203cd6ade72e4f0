import WobbleEngine
import Foundation
import WobbleCore
import WobbleSystem
import WobbleMedia

/// A platform's published rules for animated stickers and emoji
/// (`--preset NAME`). The figures and their sources are in docs/CLI.md
/// ("Where clips go").
struct Preset: Equatable, Sendable {
    /// How the frame is sized.
    enum Fit: Equatable, Sendable {
        /// Exactly N×N: the picture scaled to fit, centred, padded with transparency.
        case square(Int)
        /// The longer side exactly N, the other N or less (no padding).
        case longSide(Int)
        /// Within W×H, scaled to touch the box (one side W or H).
        case within(Int, Int)
    }

    let name: String
    /// What the platform calls the thing.
    let what: String
    let format: OutputFormat
    let fit: Fit
    /// The highest frame rate (frames are slowed to it).
    let maxFPS: Double
    /// The longest clip, in seconds (one play).
    let maxDuration: Double?
    /// The frame counts allowed.
    let frames: ClosedRange<Int>?
    /// The file size limit in bytes.
    let byteLimit: Int
    /// The longest total playback (plays × duration), when the platform
    /// counts loops: the loop count is chosen to fit it.
    let maxPlayback: Double?
    /// Where the figures come from.
    let source: String

    static let all: [Preset] = [
        Preset(name: "telegram", what: "Telegram video stickers", format: .webm, fit: .longSide(512), maxFPS: 30,
               maxDuration: 3, frames: nil, byteLimit: 256 * 1024, maxPlayback: nil,
               source: "https://core.telegram.org/stickers#video-stickers-and-emoji"),
        Preset(name: "whatsapp", what: "WhatsApp animated stickers", format: .webp, fit: .square(512), maxFPS: 125,
               maxDuration: 10, frames: nil, byteLimit: 500 * 1024, maxPlayback: nil,
               source: "https://github.com/WhatsApp/stickers/blob/main/Android/README.md"),
        Preset(name: "discord", what: "Discord stickers", format: .apng, fit: .square(320), maxFPS: 60,
               maxDuration: nil, frames: nil, byteLimit: 512 * 1024, maxPlayback: nil,
               source: "https://support.discord.com/hc/en-us/articles/4402687377815-Discord-Stickers-FAQ"),
        Preset(name: "line", what: "LINE animated stickers", format: .apng, fit: .within(320, 270), maxFPS: 60,
               maxDuration: 4, frames: 5...20, byteLimit: 300 * 1024, maxPlayback: 4,
               source: "https://creator.line.me/en/guideline/animationsticker/"),
        Preset(name: "slack", what: "Slack custom emoji", format: .gif, fit: .square(128), maxFPS: 50,
               maxDuration: nil, frames: nil, byteLimit: 128 * 1024, maxPlayback: nil,
               source: "https://slack.com/help/articles/206870177-Add-custom-emoji-and-aliases-to-your-workspace"),
    ]

    /// The names, for help and messages.
    static let names = all.map(\.name).joined(separator: "|")

    /// The preset called `name`; an unknown one is a usage error listing the known.
    static func named(_ name: String) throws -> Preset {
        guard let p = all.first(where: { $0.name == name.lowercased() }) else {
            throw UsageError("--preset: '\(name)' is not a known platform; use one of \(all.map(\.name).joined(separator: ", "))")
        }
        return p
    }

    /// The size rule in words.
    var describeFit: String {
        switch fit {
        case .square(let n): "\(n)×\(n), padded with transparency"
        case .longSide(let n): "\(n) px on the longer side"
        case .within(let w, let h): "within \(w)×\(h)"
        }
    }

    /// The file name's extension when `-o` is not given (APNG stickers are
    /// uploaded as `.png`).
    var defaultExtension: String { format == .apng ? ".png" : format.extensions.first ?? "" }

    /// `--loop` for a clip of `duration`: forever, or where the platform
    /// counts playback (LINE: at most 4 plays, at most 4 s in all) as many
    /// plays as fit.
    func loop(duration: Double) -> Int {
        guard let total = maxPlayback else { return 0 }
        let plays = max(1, min(4, Int(((total + 1e-9) / max(duration, 1e-9)).rounded(.down))))
        return plays == 1 ? -1 : plays - 1
    }

    /// The picture size (scaled, before padding) and the canvas size for a
    /// `w × h` source.
    func size(sourceWidth w: Int, sourceHeight h: Int) -> (picture: (Int, Int), canvas: (Int, Int)) {
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
