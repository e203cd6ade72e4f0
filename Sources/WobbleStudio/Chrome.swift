import WobbleCore
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
/// clip's end, a mark per poke or shake) and two status lines (frame, time
/// and mode with the keys' hint; the last message). A value: what it shows
/// is all in its fields.
struct Chrome {
    var width: Int
    var frame: Int
    var frameCount: Int
    var fps: Double
    var playhead: Double
    var clipLength: Double
    var scriptedDuration: Double
    /// The times of the pokes and shakes performed (the take's included).
    var marks: [Double]
    var recording: Bool
    var playing: Bool
    var unsavedEdits: Bool
    var message: String
    var messageIsError: Bool

    var image: RGBAImage {
        var c = Canvas(width: width, height: Layout.chromeHeight, color: (28, 28, 30))
        let w = width
        // Timeline.
        let (tx, tw) = (Layout.timelinePad, max(1, w - 2 * Layout.timelinePad))
        c.fill(x: tx, y: 4, w: tw, h: 12, (64, 64, 70))
        let length = max(clipLength, recording ? playhead : 0)
        if length > 0 {
            func x(_ t: Double) -> Int { tx + Int((min(max(t / length, 0), 1) * Double(tw - 1)).rounded()) }
            c.fill(x: tx, y: 4, w: x(playhead) - tx, h: 12, recording ? (170, 50, 50) : (70, 110, 180))
            if scriptedDuration < length - 1e-9 {
                c.fill(x: x(scriptedDuration), y: 2, w: 1, h: 16, (220, 220, 220))
            }
            for t in marks {
                c.fill(x: x(t) - 1, y: 4, w: 3, h: 4, (250, 200, 60))
            }
            c.fill(x: x(playhead) - 1, y: 1, w: 3, h: 18, (255, 255, 255))
        }
        // Status.
        let mode: String
        if recording {
            mode = "REC +\(String(format: "%.1f", playhead - scriptedDuration)) s"
        } else {
            mode = (playing ? "playing" : "paused") + (unsavedEdits ? "  unsaved edits" : "")
        }
        let line1 = "frame \(frame)/\(frameCount)  \(String(format: "%.3f", Double(frame) / fps)) s  \(mode)"
        let y1 = 22, y2 = 22 + StudioFont.cellHeight + 2
        let end = c.text(line1, x: Layout.timelinePad, y: y1, recording ? (255, 120, 120) : (235, 235, 235))
        let hint = "Space  </>  Home  H  R  A  Ctrl+S  Ctrl+Z  drag: handle/poke"
        let hx = w - Layout.timelinePad - hint.count * StudioFont.cellWidth
        if hx > end + 20 { c.text(hint, x: hx, y: y1, (130, 130, 140)) }
        var msg = message
        let room = Canvas.fits(from: Layout.timelinePad, to: w - Layout.timelinePad)
        if msg.count > room { msg = String(msg.prefix(max(0, room - 3))) + "..." }
        c.text(msg, x: Layout.timelinePad, y: y2, messageIsError ? (255, 110, 110) : (170, 200, 170))
        return c.image
    }
}
