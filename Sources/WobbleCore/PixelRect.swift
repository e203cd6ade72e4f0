/// A rectangle of whole output pixels: columns `x0 ..< x1`, rows `y0 ..< y1`
/// (empty when `x1 <= x0` or `y1 <= y0`). A frame handed on with boxes is
/// "the previous frame plus these rectangles": outside them its pixels are
/// the previous frame's.
public struct PixelRect: Sendable, Hashable, CustomStringConvertible {
    public var x0: Int
    public var y0: Int
    public var x1: Int
    public var y1: Int

    public init(x0: Int, y0: Int, x1: Int, y1: Int) {
        self.x0 = x0
        self.y0 = y0
        self.x1 = x1
        self.y1 = y1
    }

    /// No pixel.
    public static let empty = PixelRect(x0: 0, y0: 0, x1: 0, y1: 0)

    /// The whole of a `width × height` frame.
    public init(width: Int, height: Int) { self.init(x0: 0, y0: 0, x1: width, y1: height) }

    public var width: Int { max(0, x1 - x0) }
    public var height: Int { max(0, y1 - y0) }
    public var isEmpty: Bool { x1 <= x0 || y1 <= y0 }
    public var area: Int { width * height }

    /// Whether the two boxes share a pixel.
    public func intersects(_ o: PixelRect) -> Bool {
        !isEmpty && !o.isEmpty && x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1
    }

    /// The smallest box holding both.
    public func union(_ o: PixelRect) -> PixelRect {
        if isEmpty { return o }
        if o.isEmpty { return self }
        return PixelRect(x0: min(x0, o.x0), y0: min(y0, o.y0), x1: max(x1, o.x1), y1: max(y1, o.y1))
    }

    /// The box cut to a `width × height` frame.
    public func clipped(width: Int, height: Int) -> PixelRect {
        PixelRect(x0: max(0, x0), y0: max(0, y0), x1: min(width, x1), y1: min(height, y1))
    }

    /// The non-empty boxes of `boxes`, those that overlap merged into their
    /// bounding box until none overlaps another; sorted top to bottom, then
    /// left to right (the same boxes always give the same list).
    public static func merged(_ boxes: [PixelRect]) -> [PixelRect] {
        var out: [PixelRect] = []
        for b in boxes where !b.isEmpty {
            var box = b
            // Absorb every box it meets; the grown box may meet earlier ones.
            var k = 0
            while k < out.count {
                if out[k].intersects(box) {
                    box = box.union(out.remove(at: k))
                    k = 0
                } else {
                    k += 1
                }
            }
            out.append(box)
        }
        return out.sorted { ($0.y0, $0.x0, $0.y1, $0.x1) < ($1.y0, $1.x0, $1.y1, $1.x1) }
    }

    public var description: String { "\(x0),\(y0) \(width)x\(height)" }
}

extension RGBAImage {
    /// Copies the pixels of `box` (clipped to both images) from `other`, an
    /// image of the same size.
    public mutating func copy(_ box: PixelRect, from other: RGBAImage) {
        let b = box.clipped(width: min(width, other.width), height: min(height, other.height))
        guard !b.isEmpty, other.width == width else { return }
        let w = width, rowBytes = b.width * 4
        pixels.withUnsafeMutableBufferPointer { dst in
            other.pixels.withUnsafeBufferPointer { src in
                for y in b.y0 ..< b.y1 {
                    let o = (y * w + b.x0) * 4
                    (dst.baseAddress! + o).update(from: src.baseAddress! + o, count: rowBytes)
                }
            }
        }
    }
}
