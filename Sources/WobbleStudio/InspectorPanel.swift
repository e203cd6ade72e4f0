import Foundation
import WobbleStudioCore
import WobbleCore
import WobbleRender
import WobbleScript

/// The inspector's column as drawn (a value: what it shows is in its
/// fields), and where its rows are, for clicks: one geometry for both.
struct InspectorPanel: Equatable {
    var width: Int
    var height: Int
    /// The selected sketch's parameters and name (not its points: a drag
    /// does not draw the column again), nil when none is selected.
    var parameters: WobbleParameters?
    var name: String?
    /// Where it is made (`line 11 of cat.lua`, `added: not saved yet`).
    var origin: String
    /// Why it cannot be changed (computed), nil when it can.
    var readOnly: String?
    var focused: Int
    /// The name being typed, nil when not renaming.
    var typing: String?
    /// The name typed is selected (drawn on a highlight; typing replaces
    /// it), else the caret is drawn at `caret` (a character index).
    var typingSelected = false
    var caret = 0
    /// The models the motion row offers (the scene's).
    var motions: [String] = MotionKind.allCases.map(\.rawValue)

    static let pad = 8
    static let top = 26

    /// The rows and their vertical spans.
    func rows() -> [(row: InspectorRow, y: Int, h: Int)] {
        guard let parameters else { return [] }
        var y = InspectorPanel.top + 22
        var out: [(InspectorRow, Int, Int)] = []
        for r in InspectorRow.rows(parameters.motion) {
            let h: Int
            switch r {
            case .name: h = 20
            case .motion, .pin: h = 34
            case .number: h = 32
            }
            out.append((r, y, h))
            y += h
        }
        return out
    }

    /// The slider's left edge and width.
    var sliderX: (x: Int, w: Int) { (InspectorPanel.pad, max(1, width - 2 * InspectorPanel.pad)) }

    /// The choices of a choice row and the x span of each (panel pixels).
    func choices(_ row: InspectorRow) -> [(label: String, x: Int, w: Int)] {
        let labels: [String]
        switch row {
        case .motion: labels = motions
        case .pin: labels = InspectorRow.pinChoices.map { $0?.rawValue ?? "none" }
        default: return []
        }
        var x = InspectorPanel.pad
        return labels.map { l in
            let w = l.count * StudioFont.cellWidth + 6
            defer { x += w + 4 }
            return (l, x, w)
        }
    }

    var image: RGBAImage {
        var c = Canvas(width: width, height: height, color: (36, 36, 40))
        c.fill(x: 0, y: 0, w: 1, h: height, (70, 70, 78))
        let p = InspectorPanel.pad
        c.text("INSPECTOR", x: p, y: 6, (150, 150, 160))
        guard let parameters else {
            var y = InspectorPanel.top + 4
            for l in ["No region selected.", "", "Ctrl+click a region (or", "right-click), Tab for the", "next one; dragging a",
                      "handle selects it too.", "", "A adds a region."] {
                c.text(l, x: p, y: y, (200, 200, 205))
                y += StudioFont.cellHeight + 2
            }
            return c.image
        }
        let dim: (UInt8, UInt8, UInt8) = (130, 130, 140)
        let ink: (UInt8, UInt8, UInt8) = readOnly == nil ? (235, 235, 235) : (160, 160, 165)
        c.text(origin, x: p, y: InspectorPanel.top, readOnly == nil ? (170, 200, 170) : (230, 180, 110), maxX: width - p)
        for (i, (row, y, h)) in rows().enumerated() {
            if i == focused, readOnly == nil { c.fill(x: 2, y: y, w: 3, h: h - 4, (90, 150, 230)) }
            switch row {
            case .name:
                let tx = p + 8 * StudioFont.cellWidth
                c.text("name", x: p, y: y + 2, dim)
                if let typing {
                    let typed: (UInt8, UInt8, UInt8) = (255, 230, 120)
                    let n = typing.unicodeScalars.count
                    if typingSelected, n > 0 {
                        c.fill(x: tx - 1, y: y + 1, w: min(n * StudioFont.cellWidth + 2, width - p - tx + 1), h: StudioFont.cellHeight + 2, (60, 90, 160))
                    }
                    c.text(typing, x: tx, y: y + 2, typed, maxX: width - p)
                    if !typingSelected {
                        c.fill(x: min(tx + min(caret, n) * StudioFont.cellWidth, width - p), y: y + 1, w: 1, h: StudioFont.cellHeight + 2, typed)
                    }
                } else {
                    c.text(name ?? "(no name)", x: tx, y: y + 2, ink, maxX: width - p)
                }
            case .motion, .pin:
                c.text(row == .motion ? "motion" : "pin", x: p, y: y + 1, dim)
                let chosen = row == .motion ? parameters.motion.rawValue : (parameters.pin?.rawValue ?? "none")
                for ch in choices(row) {
                    let on = ch.label == chosen
                    c.fill(x: ch.x, y: y + 15, w: ch.w, h: StudioFont.cellHeight + 2, on ? (70, 110, 180) : (56, 56, 62))
                    c.text(ch.label, x: ch.x + 3, y: y + 16, on ? (255, 255, 255) : ink)
                }
            case .number(let key):
                guard let spec = InspectorRow.spec(key, of: parameters.motion) else { continue }
                let v = spec.get(parameters)
                c.text(key, x: p, y: y + 1, dim)
                let value = SketchSource.formatParameter(v) + spec.unit
                let vx = c.text(value, x: p + 10 * StudioFont.cellWidth, y: y + 1, ink)
                let range = spec.validText
                let rx = width - p - range.count * StudioFont.cellWidth
                if rx > vx + 4 { c.text(range, x: rx, y: y + 1, dim) }
                let (sx, sw) = sliderX
                c.fill(x: sx, y: y + 18, w: sw, h: 6, (60, 60, 68))
                let f = spec.fraction(v)
                let fx = Int((f * Double(sw - 1)).rounded())
                c.fill(x: sx, y: y + 18, w: fx, h: 6, readOnly == nil ? (70, 110, 180) : (90, 90, 96))
                c.fill(x: sx + fx - 1, y: y + 15, w: 3, h: 12, ink)
            }
        }
        var y = (rows().last.map { $0.y + $0.h } ?? 0) + 6
        let hints = readOnly.map { $0.split(separator: "\n").map(String.init) } ?? (typing != nil
            ? ["type the name; Enter keeps it,", "Esc leaves it as it was"]
            : ["Up/Down row, -/+ change,", "PgUp/PgDn x10, Enter rename"])
        for l in hints where y + StudioFont.cellHeight <= height {
            c.text(l, x: p, y: y, dim, maxX: width - p)
            y += StudioFont.cellHeight + 1
        }
        return c.image
    }
}
