import WobbleCore
import WobbleEngine
import WobbleRender

/// `Shift+E`: the export chooser, as an animator knows it from an
/// application's render queue or export dialog — a short list of targets
/// over the window (the scene's own output, then every platform preset the
/// command line's `--preset` knows, with its limits), `Up`/`Down` and
/// `Enter`, or the row's number, to export; `Esc` (or any other key)
/// closes it without exporting. The export then runs in the background as
/// `E`'s does.
struct PresetChooser {
    /// The rows: nil is the scene's own output (what `E` writes), then the platforms.
    static let choices: [Preset?] = [nil] + Preset.all

    /// The sheet's margin and the height of one line, in window pixels.
    static let pad = 10, rowHeight = StudioFont.cellHeight + 4

    /// The row the arrow keys are on.
    var row = 0

    /// What a key did.
    enum Answer: Equatable {
        /// Still choosing (the arrow keys moved).
        case choosing
        /// Export to this choice (nil: the scene's output).
        case export(Preset?)
        /// Closed without exporting.
        case cancel
    }

    mutating func key(_ k: StudioKey) -> Answer {
        switch k {
        case .up: row = (row + Self.choices.count - 1) % Self.choices.count; return .choosing
        case .down, .tab: row = (row + 1) % Self.choices.count; return .choosing
        case .enter: return .export(Self.choices[row])
        // A digit arrives as text too (the keyboard's layout decides it).
        case .other: return .choosing
        default: return .cancel
        }
    }

    /// A typed row number (`1` … `6`) exports that row.
    mutating func text(_ t: String) -> Answer? {
        guard let n = Int(t), n >= 1, n <= Self.choices.count else { return nil }
        row = n - 1
        return .export(Self.choices[row])
    }

    /// A platform's limits in columns: format, frame, bytes, time
    /// (`WEBM         512 px long side   256 KB  3 s`).
    static func limits(_ p: Preset) -> String {
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

    /// The sheet's lines, each with the choice it belongs to (nil: none):
    /// a title, one row per choice, the keys, and what is written.
    static func lines(loopPeriod: Double?, clipSeconds: Double?, columns: Int) -> [(text: String, choice: Int?)] {
        let indent = 13
        var out: [(String, Int?)] = [("Export with a preset", nil), ("", nil)]
        for (i, c) in choices.enumerated() {
            let label = c?.name ?? "scene"
            let head = "\(i + 1)  " + label + String(repeating: " ", count: max(1, indent - 3 - label.count))
            let rest = c.map { limits($0) } ?? "the scene's own output (what E writes)"
            let wrapped = Chrome.wrap(rest, width: max(8, columns - indent))
            for (k, part) in wrapped.enumerated() {
                out.append(((k == 0 ? head : String(repeating: " ", count: indent)) + part, i))
            }
        }
        out.append(("", nil))
        var notes = ["Up/Down and Enter, or the number, exports in the background; Esc cancels."]
        if let p = loopPeriod {
            notes.append("A looping scene: one period (\(fmt(p)) s) is written; the platform plays it over and over (LINE: as many plays as its 4 s allow).")
        } else if let s = clipSeconds {
            notes.append("The whole clip (\(fmt(s)) s) is written; a clip longer than a platform allows is refused, naming its limit.")
        }
        notes.append("The size and frame rate follow the platform; the quality is searched so that the file fits.")
        for n in notes { out += Chrome.wrap(n, width: columns).map { ($0, nil) } }
        return out
    }

    /// The chooser drawn over a window `width` x `height`.
    func image(width: Int, height: Int, loopPeriod: Double?, clipSeconds: Double?) -> RGBAImage {
        var c = Canvas(width: max(1, width), height: max(1, height), color: (24, 26, 32))
        let pad = Self.pad, rowHeight = Self.rowHeight
        let columns = max(8, Canvas.fits(from: pad, to: width - pad))
        var y = pad
        for (i, line) in Self.lines(loopPeriod: loopPeriod, clipSeconds: clipSeconds, columns: columns).enumerated() {
            if line.choice == row { c.fill(x: pad - 4, y: y - 2, w: width - 2 * pad + 8, h: rowHeight, (60, 90, 150)) }
            let colour: (UInt8, UInt8, UInt8) = i == 0 ? (255, 220, 120) : line.choice != nil ? (235, 235, 240) : (170, 175, 185)
            c.text(line.text, x: pad, y: y, colour)
            y += rowHeight
        }
        return c.image
    }
}
