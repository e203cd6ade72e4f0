import WobbleCore
import WobbleStudioCore
import WobbleRender

/// A CPU canvas for the studio's chrome (timeline and status text): RGBA,
/// opaque, drawn fresh for each presented frame.
struct Canvas {
    var image: RGBAImage

    init(width: Int, height: Int, color: (UInt8, UInt8, UInt8)) {
        var px = [UInt8](repeating: 255, count: max(0, width * height * 4))
        for i in stride(from: 0, to: px.count, by: 4) {
            px[i] = color.0
            px[i + 1] = color.1
            px[i + 2] = color.2
        }
        image = RGBAImage(width: max(0, width), height: max(0, height), pixels: px)
    }

    var width: Int { image.width }
    var height: Int { image.height }

    mutating func fill(x: Int, y: Int, w: Int, h: Int, _ c: (UInt8, UInt8, UInt8)) {
        let x0 = max(0, x), y0 = max(0, y), x1 = min(width, x + w), y1 = min(height, y + h)
        guard x0 < x1, y0 < y1 else { return }
        for yy in y0..<y1 {
            var i = (yy * width + x0) * 4
            for _ in x0..<x1 {
                image.pixels[i] = c.0
                image.pixels[i + 1] = c.1
                image.pixels[i + 2] = c.2
                image.pixels[i + 3] = 255
                i += 4
            }
        }
    }

    /// Draws `text` with its top-left at `(x, y)`; characters outside
    /// ASCII 32-126 are drawn as `?`. Returns the x after the text.
    @discardableResult
    mutating func text(_ text: String, x: Int, y: Int, _ c: (UInt8, UInt8, UInt8), maxX: Int? = nil) -> Int {
        StudioFont.draw(text.unicodeScalars, x: x, y: y, into: &image, color: c, maxX: min(maxX ?? width, width))
    }

    /// How many characters fit between `x` and `maxX`.
    static func fits(from x: Int, to maxX: Int) -> Int { max(0, (maxX - x) / StudioFont.cellWidth) }
}

/// The chrome below the picture: the timeline (the playhead, the scripted
/// clip's end, a tick per kick: the script's below, the performed ones
/// above) and the status rows (frame, time and mode with the help key;
/// the last message, or what the tick under the mouse is, wrapped on up
/// to three rows). A value: what it shows is all in its fields.
struct Chrome {
    var width: Int
    var frame: Int
    var frameCount: Int
    var fps: Double
    var playhead: Double
    var clipLength: Double
    var scriptedDuration: Double
    /// The kicks: the script's and the performed ones (the take's included).
    var ticks: [Tick]
    var recording: Bool
    var playing: Bool
    var unsavedEdits: Bool
    var message: String
    var messageIsError: Bool
    /// What the tick under the mouse is (shown instead of the message).
    var hovered: String? = nil
    /// The error of the scene's last run, shown until it runs again: the
    /// other messages come after it, never over it.
    var sceneError: String? = nil
    /// What a headless render of the clip playing would warn about, while
    /// it holds: one row in the warning colour under the error, if any.
    var warnings: [String] = []

    /// The soundtrack's ticks.
    static let beatColor: (UInt8, UInt8, UInt8) = (240, 150, 255)
    static let onsetColor: (UInt8, UInt8, UInt8) = (160, 125, 210)

    /// Rows of text under the status line.
    static let messageRows = 3

    /// The timeline's length in seconds (a take runs past the clip).
    var length: Double { max(clipLength, recording ? playhead : 0) }

    /// The window x of time `t` on a timeline `width` wide of `length` seconds.
    static func x(_ t: Double, width: Int, length: Double) -> Int {
        let tw = max(1, width - 2 * Layout.timelinePad)
        guard length > 0 else { return Layout.timelinePad }
        return Layout.timelinePad + Int((min(max(t / length, 0), 1) * Double(tw - 1)).rounded())
    }

    /// The tick nearest window x `x` within 4 pixels, if any.
    static func tick(near x: Int, in ticks: [Tick], width: Int, length: Double) -> Tick? {
        var best: (Tick, Int)?
        for t in ticks {
            let d = abs(Chrome.x(t.time, width: width, length: length) - x)
            if d <= 4, d < (best?.1 ?? .max) { best = (t, d) }
        }
        return best?.0
    }

    /// The status line: frame (of the count, except while recording past
    /// the clip), time, mode.
    var statusLine: String {
        let mode: String
        if recording {
            mode = "REC +\(String(format: "%.1f", playhead - scriptedDuration)) s"
        } else {
            mode = (playing ? "playing" : "paused") + (unsavedEdits ? "  unsaved edits" : "")
        }
        return "frame \(frame)\(recording ? "" : "/\(frameCount)")  \(String(format: "%.3f", Double(frame) / fps)) s  \(mode)"
    }

    /// The message rows: the text wrapped at the width; a text longer than
    /// the rows ends with a pointer to the help sheet, which shows it whole.
    var messageLines: [String] { messageRowsShown.map(\.text) }

    /// The message rows and how each is coloured: the scene's error first,
    /// then another message on the rows left (one, or two when it needs
    /// them: a question; the error keeps at least one).
    var messageRowsShown: [(text: String, kind: RowKind)] {
        let room = max(8, Canvas.fits(from: Layout.timelinePad, to: width - Layout.timelinePad))
        func fit(_ text: String, rows: Int) -> [String] {
            let lines = Chrome.wrap(text, width: room)
            guard lines.count > rows else { return lines }
            let more = "... (F1 shows it all)"
            var last = lines[rows - 1]
            if last.count + more.count > room { last = String(last.prefix(max(0, room - more.count))) }
            return Array(lines.prefix(rows - 1)) + [last + more]
        }
        let other = hovered ?? message
        let kind: RowKind = hovered != nil ? .hovered : messageIsError ? .error : .message
        // The warnings take one row (the rest on F1), under the error.
        let warningRows: [(text: String, kind: RowKind)] = warningLine.map { fit($0, rows: 1).map { ($0, .warning) } } ?? []
        let rows = Chrome.messageRows - warningRows.count
        guard let error = sceneError, !error.isEmpty else {
            return warningRows + (other.isEmpty ? [] : fit(other, rows: rows).map { ($0, kind) })
        }
        guard !other.isEmpty, other != error else { return fit(error, rows: rows).map { ($0, .error) } + warningRows }
        let otherRows = min(rows - 1, Chrome.wrap(other, width: room).count)
        return fit(error, rows: rows - otherRows).map { ($0, .error) } + warningRows + fit(other, rows: otherRows).map { ($0, kind) }
    }

    /// The warnings' row: the first, and how many more (F1 shows them all).
    var warningLine: String? {
        guard let first = warnings.first else { return nil }
        return "warning: \(first)" + (warnings.count > 1 ? " (+\(warnings.count - 1) more: F1)" : "")
    }

    enum RowKind { case message, error, hovered, warning }

    /// `text` wrapped into lines of at most `width` characters, at spaces
    /// where it can (a longer word is cut where the line ends).
    static func wrap(_ text: String, width: Int) -> [String] {
        let width = max(1, width)
        var lines: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = ""
            for word in paragraph.split(separator: " ", omittingEmptySubsequences: false) {
                var w = Substring(word)
                if line.isEmpty {
                } else if line.count + 1 + w.count <= width {
                    line += " "
                } else {
                    lines.append(line)
                    line = ""
                }
                while line.count + w.count > width {
                    let n = width - line.count
                    line += w.prefix(n)
                    lines.append(line)
                    line = ""
                    w = w.dropFirst(n)
                }
                line += w
            }
            lines.append(line)
        }
        while lines.count > 1, lines.last?.isEmpty == true { lines.removeLast() }
        return lines
    }

    var image: RGBAImage {
        var c = Canvas(width: width, height: Layout.chromeHeight, color: (28, 28, 30))
        let w = width
        // Timeline.
        let (tx, tw) = (Layout.timelinePad, max(1, w - 2 * Layout.timelinePad))
        c.fill(x: tx, y: 4, w: tw, h: 12, (64, 64, 70))
        let length = self.length
        if length > 0 {
            func x(_ t: Double) -> Int { Chrome.x(t, width: w, length: length) }
            // The frame shown, as the counter says it (`frame k/N` is k/N of
            // the way); a take's live clock while recording.
            let shown = recording || fps <= 0 ? playhead : Double(frame) / fps
            c.fill(x: tx, y: 4, w: x(shown) - tx, h: 12, recording ? (170, 50, 50) : (70, 110, 180))
            if scriptedDuration < length - 1e-9 {
                c.fill(x: x(scriptedDuration), y: 2, w: 1, h: 16, (220, 220, 220))
            }
            // The soundtrack's onsets (short) and beats (longer, brighter) in
            // the bar's upper half; the script's kicks are in its lower half.
            for t in ticks where t.sound == .onset { c.fill(x: x(t.time), y: 4, w: 1, h: 3, Chrome.onsetColor) }
            for t in ticks where t.sound == .beat { c.fill(x: x(t.time), y: 4, w: 1, h: 6, Chrome.beatColor) }
            for t in ticks where t.sound == nil {
                if t.selected {
                    c.fill(x: x(t.time) - 1, y: 2, w: 3, h: 16, (255, 255, 255))
                } else if case .baked = t.ref {
                    c.fill(x: x(t.time) - 1, y: 9, w: 3, h: 7, (120, 230, 120))
                } else if t.performed {
                    c.fill(x: x(t.time) - 1, y: 4, w: 3, h: 4, (250, 200, 60))
                } else {
                    c.fill(x: x(t.time), y: 10, w: 1, h: 6, (150, 230, 255))
                }
            }
            c.fill(x: x(shown) - 1, y: 1, w: 3, h: 18, (255, 255, 255))
        }
        // Status.
        let rowHeight = StudioFont.cellHeight + 2
        let y1 = 22
        let end = c.text(statusLine, x: Layout.timelinePad, y: y1, recording ? (255, 120, 120) : (235, 235, 235))
        let hint = "F1: keys"
        let hx = w - Layout.timelinePad - hint.count * StudioFont.cellWidth
        if hx > end + 14 { c.text(hint, x: hx, y: y1, (130, 130, 140)) }
        for (i, row) in messageRowsShown.enumerated() {
            let color: (UInt8, UInt8, UInt8)
            switch row.kind {
            case .hovered: color = (150, 230, 255)
            case .error: color = (255, 110, 110)
            case .message: color = (170, 200, 170)
            case .warning: color = (255, 190, 70)
            }
            c.text(row.text, x: Layout.timelinePad, y: y1 + (i + 1) * rowHeight, color)
        }
        return c.image
    }
}
