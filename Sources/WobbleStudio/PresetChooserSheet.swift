import WobbleCore
import WobbleEngine
import WobbleRender
import WobbleStudioCore

/// The `Shift+E` chooser drawn over the window: its keys map to commands
/// (`StudioKeyMap`), its sheet is drawn here.
extension PresetChooser {
    /// The sheet's margin and the height of one line, in window pixels.
    static let pad = 10, rowHeight = StudioFont.cellHeight + 4

    /// The sheet's lines, each with the choice it belongs to (nil: none):
    /// a title, one row per choice, the keys, and what is written.
    static func lines(loopPeriod: Double?, clipSeconds: Double?, columns: Int) -> [(text: String, choice: Int?)] {
        let indent = 13
        var out: [(String, Int?)] = [("Export with a preset", nil), ("", nil)]
        for (i, c) in choices.enumerated() {
            let (label, rest) = Self.label(c)
            let head = "\(i + 1)  " + label + String(repeating: " ", count: max(1, indent - 3 - label.count))
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
        notes.append("The size and frame rate follow the platform; each row says how the file is made to fit its bytes.")
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
