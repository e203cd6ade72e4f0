import Foundation

/// The four corners and the center of a sketch or wobble model, with the
/// geometry of the wobble model precomputed: edge midpoints, the four quadratic
/// Bezier boundary curves, the bounding box and whether the shape can move.
public struct RegionShape: Sendable, Hashable {
    public let lt: Point
    public let rt: Point
    public let rb: Point
    public let lb: Point
    public let center: Point

    /// Polynomial form of each boundary curve relative to the center:
    /// `B(t) - C = a t² + b t + c`.
    @usableFromInline let coefficients: [(a: Point, b: Point, c: Point)]
    /// Bounding box of the four corners (which contains the whole boundary).
    public let bbox: Rect
    /// False for degenerate shapes (zero area, zero-width bbox, center not
    /// strictly inside the boundary, non-finite points): they never move.
    public let canMove: Bool

    public init(lt: Point, rt: Point, rb: Point, lb: Point, center: Point) {
        self.lt = lt
        self.rt = rt
        self.rb = rb
        self.lb = lb
        self.center = center
        let curves = RegionShape.curves(lt: lt, rt: rt, rb: rb, lb: lb)
        coefficients = curves.map { q in
            (a: q.p0 - q.p1 * 2 + q.p2, b: (q.p1 - q.p0) * 2, c: q.p0 - center)
        }
        bbox = Rect(bounding: [lt, rt, rb, lb])
        canMove = RegionShape.checkMovable(lt: lt, rt: rt, rb: rb, lb: lb, center: center, curves: curves, bbox: bbox)
    }

    public static func == (l: RegionShape, r: RegionShape) -> Bool {
        l.lt == r.lt && l.rt == r.rt && l.rb == r.rb && l.lb == r.lb && l.center == r.center
    }

    public func hash(into h: inout Hasher) {
        for p in [lt, rt, rb, lb, center] { h.combine(p) }
    }

    /// Edge midpoints `mL, mT, mR, mB`.
    public var leftMid: Point { .mid(lt, lb) }
    public var topMid: Point { .mid(lt, rt) }
    public var rightMid: Point { .mid(rt, rb) }
    public var bottomMid: Point { .mid(rb, lb) }

    /// The boundary: `(mL, LT, mT)`, `(mT, RT, mR)`, `(mR, RB, mB)`, `(mB, LB, mL)`.
    public var boundary: [QuadraticBezier] { RegionShape.curves(lt: lt, rt: rt, rb: rb, lb: lb) }

    static func curves(lt: Point, rt: Point, rb: Point, lb: Point) -> [QuadraticBezier] {
        let mL = Point.mid(lt, lb), mT = Point.mid(lt, rt), mR = Point.mid(rt, rb), mB = Point.mid(rb, lb)
        return [QuadraticBezier(mL, lt, mT), QuadraticBezier(mT, rt, mR),
                QuadraticBezier(mR, rb, mB), QuadraticBezier(mB, lb, mL)]
    }

    /// `M = strength · min(bbox width, bbox height) · amplitude` (before the
    /// per-pixel limit to `R`).
    public func maxDisplacement(amplitude: Double, strength: Double = 0.08) -> Double {
        strength * Swift.min(bbox.width, bbox.height) * amplitude
    }

    /// `R`: the distance from the center to the nearest crossing of the ray
    /// from the center in direction `(ux, uy)` (unit) with the boundary, or
    /// nil when the ray meets no curve.
    @inlinable
    public func boundaryDistance(ux: Double, uy: Double) -> Double? {
        var best = Double.infinity
        let u = Point(ux, uy)
        for k in 0..<4 {
            let (a, b, c) = coefficients[k]
            // cross(a t² + b t + c, u) = 0
            let qa = a.cross(u), qb = b.cross(u), qc = c.cross(u)
            var roots: (Double, Double) = (.nan, .nan)
            let scale = Swift.max(abs(qb), abs(qc), 1e-300)
            if abs(qa) <= 1e-12 * scale {
                if qb != 0 { roots.0 = -qc / qb }
            } else {
                let disc = qb * qb - 4 * qa * qc
                if disc >= 0 {
                    let sq = disc.squareRoot()
                    // Numerically stable pair of roots.
                    let q = -0.5 * (qb + (qb >= 0 ? sq : -sq))
                    roots.0 = q / qa
                    roots.1 = q != 0 ? qc / q : -qb / qa
                }
            }
            for t in [roots.0, roots.1] where t.isFinite && t >= -1e-9 && t <= 1 + 1e-9 {
                let tc = Swift.min(Swift.max(t, 0), 1)
                let v = a * (tc * tc) + b * tc + c
                let along = v.dot(u)
                if along > 0 && along < best { best = along }
            }
        }
        return best.isFinite ? best : nil
    }

    /// The region test of the wobble model (`d <= R`); the center of a movable shape
    /// is inside, and nothing is inside a degenerate one.
    public func contains(_ p: Point) -> Bool {
        guard canMove, p.isFinite else { return false }
        let v = p - center
        let d = v.length
        if d == 0 { return true }
        guard let r = boundaryDistance(ux: v.x / d, uy: v.y / d) else { return false }
        return d <= r
    }

    /// The area enclosed by the four corners (the quad LT, RT, RB, LB; shoelace
    /// formula, absolute value): what `innermost` compares.
    public var cornerArea: Double {
        abs(0.5 * (lt.cross(rt) + rt.cross(rb) + rb.cross(lb) + lb.cross(lt)))
    }

    /// The index of the innermost shape of `shapes` containing `p`: the one
    /// whose corners enclose the smallest area, the first on a tie; nil when
    /// none contains it. `touch()` and the studio's pokes hit this one, so a
    /// region drawn inside another can be poked.
    public static func innermost(_ shapes: [RegionShape], containing p: Point) -> Int? {
        var best: (index: Int, area: Double)?
        for (i, s) in shapes.enumerated() where s.contains(p) {
            let a = s.cornerArea
            if best.map({ a < $0.area }) ?? true { best = (i, a) }
        }
        return best?.index
    }

    /// The displacement magnitude `m` at `p` (the hemisphere model) for peak displacement `peak` (`M` before its limit to `R`); 0
    /// outside the region and for degenerate shapes. Never NaN.
    @inlinable
    public func displacement(at p: Point, peak: Double) -> Double {
        guard peak > 0, let (d, r) = polar(at: p) else { return 0 }
        if d == 0 { return peak }
        guard d <= r, r > 0 else { return 0 }
        return RegionShape.hemisphere(d: d, r: r, peak: peak)
    }

    /// The shape-only part of the wobble model at `p`: `d = |p − C|` and `r = R`, the
    /// distance from the center to the boundary along the ray through `p`
    /// (whether or not `p` is inside: inside is `d <= r`). At the center
    /// (`d = 0`) the ray has no direction and `r` is 0. Nil for a degenerate
    /// shape (`!canMove`) and where the ray meets no curve (or `p` is not
    /// finite). `displacement(at:peak:)` is `hemisphere(d:r:peak:)` of these.
    @inlinable
    public func polar(at p: Point) -> (d: Double, r: Double)? {
        guard canMove else { return nil }
        let vx = p.x - center.x, vy = p.y - center.y
        let d = (vx * vx + vy * vy).squareRoot()
        if d == 0 { return (0, 0) }
        guard let r = boundaryDistance(ux: vx / d, uy: vy / d) else { return nil }
        return (d, r)
    }

    /// `m = R·(cos θ' − cos θ)` with `θc = acos(min(M,R)/R)`, `θ = acos(d/R)`,
    /// `θ' = θ·θc/(π/2)`.
    @inlinable
    public static func hemisphere(d: Double, r: Double, peak: Double) -> Double {
        let mm = Swift.min(peak, r)
        let thetaC = acos(Swift.min(Swift.max(mm / r, 0), 1))
        let theta = acos(Swift.min(Swift.max(d / r, 0), 1))
        let thetaP = theta * thetaC / (Double.pi / 2)
        return Swift.max(0, r * (cos(thetaP) - cos(theta)))
    }

    /// Why a shape cannot move (`canMove` false).
    public enum Stillness: Sendable, Equatable {
        /// A corner or the center is not a finite number.
        case notFinite
        /// The corners enclose no area (a zero width or height, or all on a line).
        case empty
        /// The center is on the boundary or outside it.
        case centerNotInside
    }

    /// Why this shape cannot move; nil when it can.
    public var stillness: Stillness? {
        if canMove { return nil }
        guard [lt, rt, rb, lb, center].allSatisfy(\.isFinite) else { return .notFinite }
        let area = 0.5 * (lt.cross(rt) + rt.cross(rb) + rb.cross(lb) + lb.cross(lt))
        if bbox.width <= 1e-9 || bbox.height <= 1e-9 || abs(area) <= 1e-9 { return .empty }
        return .centerNotInside
    }

    static func checkMovable(lt: Point, rt: Point, rb: Point, lb: Point, center: Point,
                             curves: [QuadraticBezier], bbox: Rect) -> Bool {
        let pts = [lt, rt, rb, lb, center]
        guard pts.allSatisfy(\.isFinite) else { return false }
        guard bbox.width > 1e-9, bbox.height > 1e-9 else { return false }
        let area = 0.5 * (lt.cross(rt) + rt.cross(rb) + rb.cross(lb) + lb.cross(lt))
        guard abs(area) > 1e-9 else { return false }
        // Winding number of the (finely sampled) boundary around the center,
        // and the center's distance from it.
        let n = 64
        var poly: [Point] = []
        poly.reserveCapacity(4 * n)
        for q in curves { for i in 0..<n { poly.append(q.point(at: Double(i) / Double(n))) } }
        var winding = 0.0
        var minDist = Double.infinity
        for i in 0..<poly.count {
            let a = poly[i] - center, b = poly[(i + 1) % poly.count] - center
            winding += atan2(a.cross(b), a.dot(b))
            let seg = b - a
            let len2 = seg.dot(seg)
            let t = len2 > 0 ? Swift.min(Swift.max(-a.dot(seg) / len2, 0), 1) : 0
            minDist = Swift.min(minDist, (a + seg * t).length)
        }
        let scale = Swift.max(bbox.width, bbox.height)
        return abs(winding) > Double.pi && minDist > 1e-6 * Swift.max(scale, 1)
    }
}
