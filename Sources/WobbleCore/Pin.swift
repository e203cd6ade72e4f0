import Foundation

/// The side of a region fixed as a root (`addSketch{..., pin = "bottom"}`):
/// the content sways from it instead of bulging around the center.
public enum PinSide: String, Sendable, Hashable, Codable, CaseIterable {
    case bottom, top, left, right
}

extension RegionShape {
    /// The two corners of `side` (bottom: lb and rb), with their names.
    public func corners(of side: PinSide) -> (Point, String, Point, String) {
        switch side {
        case .bottom: (lb, "lb", rb, "rb")
        case .top: (lt, "lt", rt, "rt")
        case .left: (lt, "lt", lb, "lb")
        case .right: (rt, "rt", rb, "rb")
        }
    }

    /// Why `side` cannot be a root, nil when it can: its two corners are one
    /// point (`addSketch`'s error).
    public func pinProblem(_ side: PinSide) -> String? {
        let (a, an, b, bn) = corners(of: side)
        guard a == b else { return nil }
        return "pin = \"\(side.rawValue)\" needs a \(side.rawValue) side, but \(an) and \(bn) are the same point"
    }

    /// The pin axis: the unit vector from the midpoint of the pinned side to
    /// the midpoint of the opposite side (the way the content sways out);
    /// nil when the two midpoints coincide (then the region does not move).
    public func pinAxis(_ side: PinSide) -> Point? {
        let (root, far): (Point, Point) = switch side {
        case .bottom: (bottomMid, topMid)
        case .top: (topMid, bottomMid)
        case .left: (leftMid, rightMid)
        case .right: (rightMid, leftMid)
        }
        let v = far - root
        let len = v.length
        guard len > 0, len.isFinite else { return nil }
        return v / len
    }

    /// `σ = ((p − C)·a) / R` for a pin axis `a`: the signed position along
    /// the axis in the region's own polar coordinates, −1 at the root's
    /// boundary point, 0 at the center, +1 at the far boundary point on the
    /// axis through the center (`|σ| <= d/R`). 0 at the center.
    @inlinable
    public static func pinCoordinate(_ p: Point, center: Point, axis: Point, r: Double) -> Double {
        guard r > 0 else { return 0 }
        return Swift.min(Swift.max(((p.x - center.x) * axis.x + (p.y - center.y) * axis.y) / r, -1), 1)
    }

    /// The pinned profile `m` for `ρ = d/R`, `σ` (`pinCoordinate`) and the
    /// peak `M` (limited to `R`, `R` unknown at the center: `M` there):
    /// `m = min(M, R) · (1 − ρ²) · ((1 + σ)/2)³ / 0.32768`.
    ///
    /// 0 on the whole boundary (`ρ = 1`); along the axis through the center
    /// (`σ = ∓ρ`) it grows monotonically from 0 at the root and peaks at
    /// `ρ = σ = 0.6` on the far side, with value exactly `min(M, R)` there
    /// (`0.64 · 0.8³ = 0.32768`); for a fixed `σ` it is largest on that axis,
    /// so that is the peak of the whole region. The peak lies at least 60% of
    /// the way from the root to the far side whatever the center (80% for a
    /// centered one).
    @inlinable
    public static func pinned(ratio rho: Double, sigma: Double, r: Double, peak: Double) -> Double {
        let mm = r > 0 ? Swift.min(peak, r) : peak
        let h = (1 + Swift.min(Swift.max(sigma, -1), 1)) / 2
        let rr = Swift.min(Swift.max(rho, 0), 1)
        return Swift.max(0, mm * (1 - rr * rr) * h * h * h / pinPeakValue)
    }

    /// The largest value of `(1 − ρ²)·((1 + σ)/2)³` over a region: `0.64·0.8³`.
    public static let pinPeakValue = 0.32768

    /// The displacement magnitude at `p` for peak `peak` with `pin` (nil:
    /// the hemisphere, `displacement(at:peak:)`); 0 outside the region, for
    /// degenerate shapes and a degenerate axis. Never NaN.
    @inlinable
    public func displacement(at p: Point, peak: Double, pin: PinSide?) -> Double {
        guard let pin else { return displacement(at: p, peak: peak) }
        guard peak > 0, let axis = pinAxis(pin), let (d, r) = polar(at: p) else { return 0 }
        if d == 0 { return RegionShape.pinned(ratio: 0, sigma: 0, r: 0, peak: peak) }
        guard d <= r, r > 0 else { return 0 }
        return RegionShape.pinned(ratio: d / r, sigma: RegionShape.pinCoordinate(p, center: center, axis: axis, r: r), r: r, peak: peak)
    }
}
