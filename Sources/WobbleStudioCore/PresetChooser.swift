import WobbleCore
import WobbleEngine

/// `Shift+E`: the export chooser, as an animator knows it from an
/// application's render queue or export dialog — a short list of targets
/// (the scene's own output, then every platform preset the command line's
/// `--preset` knows, with its limits, then the live web page,
/// `<scene>.html`); a front end moves its row, exports the row chosen, or
/// closes it without exporting. The export then runs in the background as
/// `E`'s does. (The window: `Up`/`Down` and `Enter`, or the row's number;
/// `Esc` or any other key closes it.)
package struct PresetChooser: Codable, Equatable {
    /// A row: the scene's own output (what `E` writes), a platform, or
    /// the web page (`<scene>.html` beside the scene, as `-o x.html`).
    package enum Choice: Equatable, Sendable {
        case scene, preset(Preset), webPage
    }

    /// The rows: the scene's own output, the platforms, the web page.
    package static let choices: [Choice] = [.scene] + Preset.all.map { .preset($0) } + [.webPage]

    /// The row chosen so far.
    package var row = 0

    /// What a command did.
    package enum Answer: Equatable {
        /// Still choosing (the row moved).
        case choosing
        /// Export to this choice.
        case export(Choice)
        /// Closed without exporting.
        case cancel
    }

    /// Moves the row by `d` (wrapping).
    package mutating func move(by d: Int) -> Answer {
        let n = Self.choices.count
        row = ((row + d) % n + n) % n
        return .choosing
    }

    /// Exports row `i` (nil: the row chosen); a row that is not there keeps choosing.
    package mutating func choose(_ i: Int?) -> Answer {
        let i = i ?? row
        guard Self.choices.indices.contains(i) else { return .choosing }
        row = i
        return .export(Self.choices[i])
    }

    /// A platform's limits in columns: format, frame, bytes, time
    /// (`WEBM         512 px long side   256 KB  3 s`).
    package static func limits(_ p: Preset) -> String {
        func col(_ t: String, _ w: Int) -> String { t.count >= w ? t + " " : t + String(repeating: " ", count: w - t.count) }
        let frame: String
        switch p.fit {
        case .square(let n): frame = "\(n)x\(n)"
        case .longSide(let n): frame = "\(n) px long side"
        case .within(let w, let h): frame = "within \(w)x\(h)"
        }
        var time = p.maxDuration.map { "\(fmt($0)) s" } ?? "any length"
        if let f = p.frames { time += ", \(f.lowerBound)-\(f.upperBound) frames" }
        return col(Preset.spelled(p.formats), 13) + col(frame, 19) + col(PresetRun.kb(p.byteLimit), 8) + time
    }

    /// How the file is made to fit the platform's byte limit, as
    /// `--preset` does it for each format (`PresetRun`): a video in two
    /// passes at the bitrate that fills the limit, APNG lossless but for
    /// fewer colour levels, the others at the best quality that fits; of
    /// two formats, the one closer to the frames is kept.
    package static func fitting(_ p: Preset) -> String {
        let each = p.formats.map { f -> String in
            let how: String
            if f.video != nil {
                how = "two passes at the bitrate that fills \(PresetRun.kb(p.byteLimit)) (the quality searched only where they cannot)"
            } else if f == .apng {
                how = "lossless, the colour levels searched (8 down to 4 bits a channel) until it fits"
            } else {
                how = "the quality searched for the best that fits"
            }
            return p.formats.count > 1 ? "\(f.rawValue.uppercased()) \(how)" : how
        }
        return each.joined(separator: "; ") + (p.formats.count > 1 ? "; the one closer to the frames is kept" : "")
    }

    /// A row's name and what it writes (`telegram`, `WEBM  512 px long side
    /// ...; two passes at ...`): the limits, then how the file fits them.
    package static func label(_ c: Choice) -> (name: String, limits: String) {
        switch c {
        case .scene: ("scene", "the scene's own output (what E writes)")
        case .preset(let p): (p.name, limits(p) + "; " + fitting(p))
        case .webPage: ("web page", "HTML         <scene>.html, one file: the scene played live in a browser (a drag pokes, a shake shakes), nothing from the network")
        }
    }

    /// A platform's row (as `label(.preset(p))`).
    package static func label(_ p: Preset) -> (name: String, limits: String) { label(.preset(p)) }
}
