import Foundation
import WobbleCore
import WobbleSystem

/// The static displacement profile of one region under one output mapping:
/// the displacement magnitude `m` per output pixel of the region's box, so
/// that a frame moves a pixel with one multiply-add (`m · swing ·
/// direction`) and one bilinear sample, both backends alike.
///
/// What is static: the shape-only geometry (`RegionGeometry`: `d/R`, `R`,
/// `θ = acos(d/R)`, the pin coordinate `σ`, and which pixels the region
/// can move), computed once per shape (a `prepare()`, a studio drag or
/// reset makes new shapes, hence new profiles). The magnitude field itself
/// also depends on the peak `M`: the hemisphere's `θc = acos(min(M, R)/R)`
/// is not linear in `M`, so one field scaled by the amplitude would be off
/// by up to a pixel. Exact fields are kept for a fixed grid of peaks, and a
/// frame's field is the blend of the two around its peak
/// (`magnitudes(peak:)`): a classic model's peak changes only at a cycle
/// boundary, a spring's every frame, and either costs a blend.
///
/// `m` is computed in doubles with the reference's own formulas
/// (`RegionShape.hemisphere`, `RegionShape.pinned`) and stored as a float;
/// a pixel the reference moves (`m > 0` in doubles) gets at least the
/// smallest positive float, a pixel it does not move exactly 0, so
/// membership (which region wins on an overlap with `overlap("first")`) is
/// the reference's, exactly, borderline pixels on the boundary included.
final class DisplacementProfile {
    /// The shape-only part: the geometry and the grid's exact fields,
    /// shared with the profiles of the same shape moved by whole pixels
    /// (`DisplacementProfiles`).
    let shared: SharedGeometry
    /// Where this region's box lies against the shared geometry's, in
    /// output pixels.
    let dx: Int, dy: Int
    /// The shape-only geometry (at the shared geometry's place).
    var geometry: RegionGeometry { shared.geometry }
    /// The box in output pixels.
    var x0: Int { geometry.x0 + dx }
    var y0: Int { geometry.y0 + dy }
    var width: Int { geometry.width }
    var height: Int { geometry.height }
    var isEmpty: Bool { geometry.isEmpty }
    /// How many peaks' fields are kept (least recently used dropped).
    static let fieldsKept = 2
    /// The fields computed so far, most recently used last.
    private var fields: [(peak: Double, m: MagnitudeField)] = []
    /// How many exact fields the shared geometry has computed (tests: each
    /// grid peak once, a geometry once per shape).
    var fieldsComputed: Int { shared.fieldsComputed }

    /// The profile of `shape` (with `pin`'s profile instead of the
    /// hemisphere) under `m`.
    convenience init(shape: RegionShape, mapping m: OutputMapping, pin: PinSide?) {
        self.init(shared: SharedGeometry(RegionGeometry(shape: shape, mapping: m, pin: pin)), dx: 0, dy: 0)
    }

    /// A profile on `shared`'s geometry moved by `(dx, dy)` output pixels.
    init(shared: SharedGeometry, dx: Int, dy: Int) {
        self.shared = shared
        self.dx = dx
        self.dy = dy
        shared.users += 1
    }

    deinit { shared.users -= 1 }

    /// About the bytes a profile of `shape` under `m` needs at most, per
    /// pixel of its box: the geometry while it is made (twice 16), then the
    /// geometry and the fields kept (grid and exact, 4 each).
    static func bytesNeeded(_ shape: RegionShape, mapping m: OutputMapping) -> Int {
        let b = m.pixelBounds(covering: shape.bbox)
        guard b.i0 <= b.i1, b.j0 <= b.j1 else { return 0 }
        return (b.i1 - b.i0 + 1) * (b.j1 - b.j0 + 1) * (2 * 16 + 4 * (fieldsKept + gridKept + 1))
    }

    /// Refuses a profile the memory left cannot hold, with one line.
    static func requireMemory(_ shape: RegionShape, mapping m: OutputMapping) throws {
        let b = m.pixelBounds(covering: shape.bbox)
        try TaskBudget.requireMemory(bytesNeeded(shape, mapping: m),
                                     for: "the displacement profile of a \(b.i1 - b.i0 + 1)×\(b.j1 - b.j0 + 1) region",
                                     hint: "; render it smaller (--width, --height)")
    }

    /// Bytes kept: the geometry and the fields (the shared part counted
    /// with each profile that uses it: an upper bound).
    var byteCount: Int {
        shared.byteCount + fields.count * geometry.width * geometry.height * 4
    }

    /// The magnitude `m` per pixel of the box (rows top to bottom) for the
    /// peak `peak` (`M` before its limit to `R`); 0 where the region does
    /// not move the pixel.
    ///
    /// Interpolated, linearly in `M`, between the exact fields of the two
    /// peaks around it on a fixed geometric grid (`gridPeak`, eight steps an
    /// octave), which are computed once each and kept: a spring, whose peak
    /// changes every frame, costs a blend of two fields per frame, not an
    /// `acos` and a `cos` per pixel. `m` is smooth in `M` (its second
    /// derivative is about `0.22/R`), so a step of 9% of `M` is off by
    /// under 0.003 px at the default strength. The value depends on `peak`
    /// alone (never on which frames came before: a `--frames` slice is the
    /// full render's). Boundary pixels take the reference's decision.
    func magnitudes(peak: Double) -> MagnitudeField {
        if let k = fields.firstIndex(where: { $0.peak == peak }) {
            let f = fields.remove(at: k)
            fields.append(f)
            return f.m
        }
        var out = [Float](repeating: 0, count: geometry.width * geometry.height)
        if peak > 0, peak.isFinite {
            let k = DisplacementProfile.gridIndex(peak)
            let lo = DisplacementProfile.gridPeak(k), hi = DisplacementProfile.gridPeak(k + 1)
            let t = Float((peak - lo) / (hi - lo))
            let a = shared.gridField(k), b = shared.gridField(k + 1)
            out.withUnsafeMutableBufferPointer { o in
                for n in 0 ..< o.count { o[n] = a.values[n] + t * (b.values[n] - a.values[n]) }
            }
            DisplacementProfile.settleBorderline(geometry, peak: peak, into: &out)
        }
        let m = MagnitudeField(out)
        fields.append((peak, m))
        if fields.count > DisplacementProfile.fieldsKept { fields.removeFirst() }
        return m
    }

    /// Grid fields kept per profile that uses them (least recently used
    /// dropped).
    static let gridKept = 2

    /// The grid's peaks: `2^(k/8) / 256` px for `k >= 1`, and 0 for `k = 0`.
    static func gridPeak(_ k: Int) -> Double { k <= 0 ? 0 : exp2(Double(k) / 8) / 256 }

    /// The `k` with `gridPeak(k) <= peak < gridPeak(k + 1)`.
    static func gridIndex(_ peak: Double) -> Int {
        guard peak >= gridPeak(1) else { return 0 }
        var k = Swift.max(1, Int((log2(peak * 256) * 8).rounded(.down)))
        while gridPeak(k + 1) <= peak { k += 1 }
        while k > 1 && gridPeak(k) > peak { k -= 1 }
        return k
    }


    /// The field of `g` for `peak`, rows split over the cores.
    static func field(_ g: RegionGeometry, peak: Double) -> [Float] {
        let n = RegionGeometry.channels, count = g.width * g.height
        var out = [Float](repeating: 0, count: count)
        guard count > 0, peak > 0, peak.isFinite else { return out }
        let pinned = g.pin != nil
        let chunks = min(g.height, 8)
        let workers = max(1, min(chunks, ThisProcess.cores))
        g.values.withUnsafeBufferPointer { v in
            out.withUnsafeMutableBufferPointer { buffer in
                nonisolated(unsafe) let o = buffer
                // Each chunk writes only its own rows.
                Parallel.run(workers) { worker in
                    for c in stride(from: worker, to: chunks, by: workers) {
                        for k in (count * c / chunks) ..< (count * (c + 1) / chunks) {
                            let ratio = Double(v[k * n]), r = Double(v[k * n + 1])
                            guard r > 0 else { continue }
                            let m: Double
                            if pinned {
                                m = ratio == 0 ? RegionShape.pinned(ratio: 0, sigma: 0, r: 0, peak: peak)
                                    : RegionShape.pinned(ratio: ratio, sigma: Double(v[k * n + 3]), r: r, peak: peak)
                            } else if ratio == 0 {
                                m = peak
                            } else {
                                // The reference's hemisphere with θ = acos(d/R) as stored.
                                let thetaC = acos(Swift.min(Swift.max(Swift.min(peak, r) / r, 0), 1))
                                let theta = Double(v[k * n + 2])
                                m = Swift.max(0, r * (cos(theta * thetaC / (Double.pi / 2)) - ratio))
                            }
                            o[k] = encode(m)
                        }
                    }
                }
            }
        }
        settleBorderline(g, peak: peak, into: &out)
        return out
    }

    /// The pixels on the boundary of `g` as the reference decides them for
    /// `peak`, from `d` and `R` in doubles: 0 where it does not move them,
    /// its own `m` where it does.
    static func settleBorderline(_ g: RegionGeometry, peak: Double, into out: inout [Float]) {
        let n = RegionGeometry.channels
        for b in g.borderline {
            let sigma = Double(g.values[b.index * n + 3])
            guard RegionGeometry.moves(b, peak: peak, pin: g.pin, sigma: sigma) else {
                out[b.index] = 0
                continue
            }
            let m = g.pin == nil ? RegionShape.hemisphere(d: b.d, r: b.r, peak: peak)
                : RegionShape.pinned(ratio: b.d / b.r, sigma: sigma, r: b.r, peak: peak)
            out[b.index] = encode(m)
        }
    }

    /// `m` as stored: 0 stays 0 (not moved), anything positive stays
    /// positive.
    @inline(__always)
    static func encode(_ m: Double) -> Float {
        m > 0 ? Swift.max(Float(m), Float.leastNonzeroMagnitude) : 0
    }
}

/// The shape-only part of the profiles of one shape: its geometry and the
/// grid's exact fields, computed once for every region whose shape is this
/// one moved by whole output pixels (`DisplacementProfiles`).
final class SharedGeometry {
    let geometry: RegionGeometry
    /// The profiles using it (each keeps `gridKept` grid fields' worth).
    fileprivate(set) var users = 0
    /// The grid's exact fields computed so far, by index.
    private var grid: [Int: MagnitudeField] = [:]
    private var gridOrder: [Int] = []
    /// How many exact fields have been computed.
    private(set) var fieldsComputed = 0

    init(_ geometry: RegionGeometry) { self.geometry = geometry }

    /// Bytes kept: the geometry and the grid's fields.
    var byteCount: Int { geometry.byteCount + grid.count * geometry.width * geometry.height * 4 }

    /// The exact field at grid peak `k`, computed on first use; the
    /// `gridKept` most recently used per profile using it are kept.
    func gridField(_ k: Int) -> MagnitudeField {
        if let f = grid[k] {
            gridOrder.removeAll { $0 == k }
            gridOrder.append(k)
            return f
        }
        let f = MagnitudeField(DisplacementProfile.field(geometry, peak: DisplacementProfile.gridPeak(k)))
        fieldsComputed += 1
        grid[k] = f
        gridOrder.append(k)
        while gridOrder.count > DisplacementProfile.gridKept * Swift.max(1, users) { grid[gridOrder.removeFirst()] = nil }
        return f
    }
}

/// A magnitude field in memory of its own, so that the rows of a frame can
/// read it through a plain pointer (no reference counting per pixel).
final class MagnitudeField {
    let values: UnsafeMutableBufferPointer<Float>
    /// The largest `m` (how far the region's samples may reach).
    let maxValue: Float

    init(_ field: [Float]) {
        values = .allocate(capacity: field.count)
        _ = values.initialize(from: field)
        maxValue = field.max() ?? 0
    }

    deinit { values.deallocate() }
}

/// The profiles of the shapes a renderer draws, by shape and pin, kept while
/// their total size stays under a budget (least recently used dropped, never
/// one the current frame uses).
///
/// Shapes that are one shape moved by whole pixels share its geometry and
/// grid fields (`SharedGeometry`), computed once: where the output is at the
/// image's scale, the region is unpinned, its box lies inside the output
/// (no clipping), and every corner and center coordinate is a multiple of
/// 2⁻²⁰ under 2²⁸ in size, every quantity the geometry derives from the
/// shape (edge midpoints, the curves' coefficients, each pixel centre less
/// the center, the bounding box and its pixel bounds) is exact, so it is the
/// same number for the moved shape at the moved pixel: the same bytes.
final class DisplacementProfiles {
    let mapping: OutputMapping
    private var profiles: [GeometryKey: (profile: DisplacementProfile, lastUsed: Int)] = [:]
    /// The shared geometries by the shape moved to the origin (`place`),
    /// with the whole-pixel offset of the shape each was computed for and
    /// whether that shape could move.
    private var placed: [RegionShape: (shared: SharedGeometry, x: Int, y: Int, canMove: Bool)] = [:]
    private var bytes = 0
    static let budget = 256 << 20
    /// Profiles computed so far (tests).
    private(set) var computed = 0
    /// Geometries computed so far (tests: fewer than `computed` where
    /// shapes share one).
    private(set) var geometriesComputed = 0

    init(mapping: OutputMapping) {
        self.mapping = mapping
    }

    /// The profile of `shape` with `pin`, computed on first use. Throws
    /// (one line, before allocating) when the memory left cannot hold it.
    func profile(_ shape: RegionShape, pin: PinSide?, frame: Int) throws -> DisplacementProfile {
        let key = GeometryKey(shape: shape, pin: pin)
        if let p = profiles[key] {
            profiles[key] = (p.profile, frame)
            return p.profile
        }
        let place = pin == nil ? DisplacementProfiles.place(shape, mapping: mapping) : nil
        let p: DisplacementProfile
        if let place, let s = placed[place.origin], s.canMove == shape.canMove {
            p = DisplacementProfile(shared: s.shared, dx: place.x - s.x, dy: place.y - s.y)
        } else {
            try DisplacementProfile.requireMemory(shape, mapping: mapping)
            p = DisplacementProfile(shape: shape, mapping: mapping, pin: pin)
            geometriesComputed += 1
            if let place { placed[place.origin] = (p.shared, place.x, place.y, shape.canMove) }
        }
        computed += 1
        profiles[key] = (p, frame)
        bytes += p.byteCount
        return p
    }

    /// `shape` moved by whole pixels `(-x, -y)` to near the origin, where
    /// that and the geometry under `m` are exact (see the type's
    /// description); nil where they may not be.
    static func place(_ shape: RegionShape, mapping m: OutputMapping) -> (origin: RegionShape, x: Int, y: Int)? {
        guard m.scaleX == 1, m.scaleY == 1 else { return nil }
        let points = [shape.lt, shape.rt, shape.rb, shape.lb, shape.center]
        let grid = 1_048_576.0   // 2²⁰
        guard points.allSatisfy({ p in
            [p.x, p.y].allSatisfy { v in abs(v) < 268_435_456 && (v * grid).rounded() == v * grid }
        }) else { return nil }
        let b = shape.bbox
        // The pixel bounds unclipped by the output's edges.
        guard b.minX >= 0.5, b.minY >= 0.5, b.maxX <= Double(m.outputWidth) - 0.5, b.maxY <= Double(m.outputHeight) - 0.5
        else { return nil }
        let x = Int(b.minX.rounded(.down)), y = Int(b.minY.rounded(.down))
        let t = Point(Double(x), Double(y))
        return (RegionShape(lt: shape.lt - t, rt: shape.rt - t, rb: shape.rb - t, lb: shape.lb - t, center: shape.center - t), x, y)
    }

    /// Drops least recently used profiles while over the budget (and the
    /// shared geometries no profile uses any more).
    func evict(keeping now: Int) {
        bytes = profiles.values.reduce(0) { $0 + $1.profile.byteCount }
        guard bytes > DisplacementProfiles.budget else { return }
        for (key, entry) in profiles.sorted(by: { $0.value.lastUsed < $1.value.lastUsed }) {
            guard bytes > DisplacementProfiles.budget, entry.lastUsed < now else { break }
            bytes -= entry.profile.byteCount
            profiles[key] = nil
        }
        placed = placed.filter { $0.value.shared.users > 0 }
    }
}
