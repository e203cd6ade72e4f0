import WobbleCore

/// `RegionShape.polar` for every pixel of a region's box, the same doubles
/// in fewer steps: a ray from the center meets one or two of the four
/// boundary curves, so the curves it cannot meet are skipped before their
/// quadratic is solved.
///
/// A curve lies in the triangle of its three control points (relative to
/// the center `w0, w1, w2`), and every point `RegionShape.boundaryDistance`
/// takes from it is a point of the curve (`t` clamped into [0, 1]) on the
/// ray's line to within rounding (`|cross(v, u)|` about 1e-7 px at most:
/// the root's residual, or the 1e-9 of `t` it clamps) with `v · u > 0`. So a
/// curve whose triangle lies wholly on one side of the ray's line, or wholly
/// behind the center, by more than `margin` (1e-5 of the shape's size, a
/// hundred times that rounding) gives the ray no point, and skipping it
/// leaves the nearest crossing, the minimum over the other curves, as it
/// was. The curves that are solved are solved with `boundaryDistance`'s
/// own operations in its own order.
struct BoundaryRays {
    /// One boundary curve: `B(t) − C = a t² + b t + c` (as `RegionShape`
    /// computes its coefficients) and its control points relative to `C`.
    struct Curve {
        var ax: Double, ay: Double, bx: Double, by: Double, cx: Double, cy: Double
        var w0x: Double, w0y: Double, w1x: Double, w1y: Double, w2x: Double, w2y: Double
    }

    let centerX: Double, centerY: Double
    let curves: [Curve]
    /// How far a triangle must be from the ray's line (or behind the
    /// center) for its curve to be skipped, in pixels.
    let margin: Double

    init(_ shape: RegionShape) {
        let center = shape.center
        centerX = center.x
        centerY = center.y
        var size = 0.0
        curves = shape.boundary.map { q in
            let a = q.p0 - q.p1 * 2 + q.p2, b = (q.p1 - q.p0) * 2, c = q.p0 - center
            let w1 = q.p1 - center, w2 = q.p2 - center
            size = max(size, abs(c.x), abs(c.y), abs(w1.x), abs(w1.y), abs(w2.x), abs(w2.y))
            return Curve(ax: a.x, ay: a.y, bx: b.x, by: b.y, cx: c.x, cy: c.y, w0x: c.x, w0y: c.y, w1x: w1.x, w1y: w1.y,
                         w2x: w2.x, w2y: w2.y)
        }
        margin = 1e-5 * (size + 1)
    }

    /// `shape.polar(at: p)` of the shape this was made from, which must be
    /// able to move (`canMove`).
    @inline(__always)
    func polar(at p: Point) -> (d: Double, r: Double)? {
        let vx = p.x - centerX, vy = p.y - centerY
        let d = (vx * vx + vy * vy).squareRoot()
        if d == 0 { return (0, 0) }
        let ux = vx / d, uy = vy / d
        var best = Double.infinity
        curves.withUnsafeBufferPointer { cs in
            for k in 0 ..< cs.count {
                let q = cs[k]
                guard !BoundaryRays.misses(q, ux, uy, margin) else { continue }
                // `RegionShape.boundaryDistance` for this curve, operation
                // for operation.
                let qa = q.ax * uy - q.ay * ux, qb = q.bx * uy - q.by * ux, qc = q.cx * uy - q.cy * ux
                var r0 = Double.nan, r1 = Double.nan
                let scale = Swift.max(abs(qb), abs(qc), 1e-300)
                if abs(qa) <= 1e-12 * scale {
                    if qb != 0 { r0 = -qc / qb }
                } else {
                    let disc = qb * qb - 4 * qa * qc
                    if disc >= 0 {
                        let sq = disc.squareRoot()
                        let s = -0.5 * (qb + (qb >= 0 ? sq : -sq))
                        r0 = s / qa
                        r1 = s != 0 ? qc / s : -qb / qa
                    }
                }
                @inline(__always) func take(_ t: Double) {
                    guard t.isFinite && t >= -1e-9 && t <= 1 + 1e-9 else { return }
                    let tc = Swift.min(Swift.max(t, 0), 1)
                    let x = q.ax * (tc * tc) + q.bx * tc + q.cx, y = q.ay * (tc * tc) + q.by * tc + q.cy
                    let along = x * ux + y * uy
                    if along > 0 && along < best { best = along }
                }
                take(r0)
                take(r1)
            }
        }
        return best.isFinite ? (d, best) : nil
    }

    /// Whether the ray from the center along `(ux, uy)` cannot meet curve
    /// `q`: its control points' triangle is more than `m` to one side of
    /// the ray's line, or more than `m` behind the center.
    @inline(__always)
    static func misses(_ q: Curve, _ ux: Double, _ uy: Double, _ m: Double) -> Bool {
        let s0 = q.w0x * uy - q.w0y * ux, s1 = q.w1x * uy - q.w1y * ux, s2 = q.w2x * uy - q.w2y * ux
        if s0 > m && s1 > m && s2 > m { return true }
        if s0 < -m && s1 < -m && s2 < -m { return true }
        return q.w0x * ux + q.w0y * uy < -m && q.w1x * ux + q.w1y * uy < -m && q.w2x * ux + q.w2y * uy < -m
    }
}
