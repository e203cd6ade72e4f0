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
