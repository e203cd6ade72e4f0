/// A point or vector in image pixels (origin top-left, x right, y down).
public struct Point: Sendable, Hashable, Codable, CustomStringConvertible {
    public var x: Double
    public var y: Double

    public init(_ x: Double, _ y: Double) {
        self.x = x
        self.y = y
    }

    public init(x: Double, y: Double) {
        self.init(x, y)
    }

    public static let zero = Point(0, 0)

    public static func + (a: Point, b: Point) -> Point { Point(a.x + b.x, a.y + b.y) }
    public static func - (a: Point, b: Point) -> Point { Point(a.x - b.x, a.y - b.y) }
    public static func * (a: Point, s: Double) -> Point { Point(a.x * s, a.y * s) }
    public static func * (s: Double, a: Point) -> Point { Point(a.x * s, a.y * s) }
    public static func / (a: Point, s: Double) -> Point { Point(a.x / s, a.y / s) }

    /// The dot product.
    public func dot(_ o: Point) -> Double { x * o.x + y * o.y }
    /// The z component of the cross product (positive: `o` is clockwise of
    /// `self` on screen, since y points down).
    public func cross(_ o: Point) -> Double { x * o.y - y * o.x }
    /// Euclidean length.
    public var length: Double { (x * x + y * y).squareRoot() }
    /// True when both coordinates are finite numbers.
    public var isFinite: Bool { x.isFinite && y.isFinite }
    /// The midpoint of `a` and `b`.
    public static func mid(_ a: Point, _ b: Point) -> Point { Point((a.x + b.x) / 2, (a.y + b.y) / 2) }

    public var description: String { "(\(x), \(y))" }
}

/// A quadratic Bezier curve `B(t) = (1-t)²P0 + 2t(1-t)P1 + t²P2`, `t ∈ [0, 1]`.
public struct QuadraticBezier: Sendable, Hashable {
    public var p0: Point
    public var p1: Point
    public var p2: Point

    public init(_ p0: Point, _ p1: Point, _ p2: Point) {
        self.p0 = p0
        self.p1 = p1
        self.p2 = p2
    }

    /// The point at parameter `t`.
    public func point(at t: Double) -> Point {
        let u = 1 - t
        return p0 * (u * u) + p1 * (2 * t * u) + p2 * (t * t)
    }
}

/// An axis-aligned rectangle in image pixels.
public struct Rect: Sendable, Hashable {
    public var minX: Double
    public var minY: Double
    public var maxX: Double
    public var maxY: Double

    public init(minX: Double, minY: Double, maxX: Double, maxY: Double) {
        self.minX = minX
        self.minY = minY
        self.maxX = maxX
        self.maxY = maxY
    }

    /// The bounding box of `points` (which must not be empty).
    public init(bounding points: [Point]) {
        var r = Rect(minX: .infinity, minY: .infinity, maxX: -.infinity, maxY: -.infinity)
        for p in points {
            r.minX = Swift.min(r.minX, p.x)
            r.minY = Swift.min(r.minY, p.y)
            r.maxX = Swift.max(r.maxX, p.x)
            r.maxY = Swift.max(r.maxY, p.y)
        }
        self = r
    }

    public var width: Double { maxX - minX }
    public var height: Double { maxY - minY }
}
