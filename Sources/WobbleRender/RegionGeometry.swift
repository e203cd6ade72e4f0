import Foundation
import WobbleCore
import WobbleSystem

/// The shape-only geometry of one region at the centre of every
/// output pixel of the region's bounding box: `d/R`, `R` and `θ = acos(d/R)`
/// (so a fragment evaluates one `acos` and one `cos`, not two of each), where
/// `d = |p − C|` and `R` is the exact distance from the center to the
/// boundary along the ray through `p` (`RegionShape.polar`).
///
/// It depends only on the shape (immutable for a model's life) and the
/// renderer's output mapping, so the GLES renderer computes it once per shape;
/// the amplitude-dependent hemisphere model is
/// evaluated per fragment in `Shaders/wobble.frag`. Which pixels belong to the
/// region is decided here, in doubles, with the same `d` and `R` the CPU
/// reference uses, so both backends agree exactly on which region moves which
/// pixel (first wins on an overlap, even for pixel centres that lie exactly on
/// a boundary, where a float32 boundary solve on the GPU could go either way).
///
/// One subtlety keeps that exact: for a pixel centre on the boundary, `d` and
/// `R` differ only by rounding, and whether the reference's `m` (in doubles)
/// is then 0 or a few ulps depends on the peak. Such `borderline` pixels are
/// listed with their `d` and `R`; the renderer settles them for each peak
/// with the reference's own `RegionShape.hemisphere` (`moves(_:peak:)`) and
/// patches those texels, a handful per shape, when the peak changes.
struct RegionGeometry {
    /// The box in output pixels: columns `x0 ..< x0 + width`, rows
    /// `y0 ..< y0 + height`; empty (width 0) when no pixel moves.
    let x0: Int
    let y0: Int
    let width: Int
    let height: Int
    /// Per pixel of the box, rows top to bottom, `channels` floats: `d/R` in
    /// `[0, 1)`, `R > 0` and `θ = acos(d/R)` (in doubles) where the region
    /// moves the pixel, then `σ` for a pinned region (else 0); all 0 where it does not (outside, on the
    /// boundary, no boundary hit). At the center itself (`d = 0`,
    /// displacement `M` unlimited) `(0, 1, π/2, 0)`.
    let values: [Float]
    /// Floats per pixel in `values` (an RGBA32F texel).
    static let channels = 4
    /// Pixels with `d < R` by less than `borderlineBand · R`, by index into
    /// the box (`j · width + i`), with `d` and `R`; stored in `values` as
    /// moving.
    let borderline: [(index: Int, d: Double, r: Double)]

    /// Relative width of the band inside the boundary where `m` may round
    /// to 0 in doubles (it is about `(R − d)·4M/(πR)` there).
    static let borderlineBand = 1e-6

    /// The pinned side the fourth channel is for (nil: no pin, channel 0).
    let pin: PinSide?

    /// Whether the reference moves borderline pixel `b` for peak `peak`:
    /// `RegionShape.displacement(at:peak:pin:) > 0`, from the same `d` and
    /// `R` (and `σ`, `sigma`, for a pin).
    static func moves(_ b: (index: Int, d: Double, r: Double), peak: Double, pin: PinSide? = nil, sigma: Double = 0) -> Bool {
        guard peak > 0 else { return false }
        if pin != nil { return RegionShape.pinned(ratio: b.d / b.r, sigma: sigma, r: b.r, peak: peak) > 0 }
        return RegionShape.hemisphere(d: b.d, r: b.r, peak: peak) > 0
    }

    var isEmpty: Bool { width == 0 || height == 0 }
    /// Bytes of `values` (the texture's size).
    var byteCount: Int { values.count * MemoryLayout<Float>.size }

    /// `(d/R, R, θ)` for a pixel at `(d, r)` from `RegionShape.polar`, or nil
    /// where the region never moves it: `displacement(at:peak:)` is
    /// non-zero for every peak > 0 exactly where `d = 0` or `d < R`.
    static func encode(d: Double, r: Double) -> (ratio: Float, r: Float, theta: Float)? {
        if d == 0 { return (0, 1, Float(Double.pi / 2)) }
        guard r > 0, d < r else { return nil }
        // A ratio of 0 marks the center: keep others positive.
        return (max(Float(d / r), Float.leastNormalMagnitude), Float(r), Float(acos(min(max(d / r, 0), 1))))
    }

    /// The geometry of `shape` under `m`; with `pin`, the fourth channel
    /// holds `σ` (`RegionShape.pinCoordinate`) for its axis.
    init(shape: RegionShape, mapping m: OutputMapping, pin: PinSide? = nil) {
        let b = shape.bbox
        let axis = pin.flatMap { shape.pinAxis($0) }
        // The output pixels whose source point may lie in the bbox (as
        // CPURenderer bounds them); each is tested exactly below.
        let (i0, i1, j0, j1) = m.pixelBounds(covering: b)
        guard shape.canMove, i0 <= i1, j0 <= j1, b.minX.isFinite, b.maxY.isFinite, pin == nil || axis != nil else {
            self.init(empty: (), pin: pin)
            return
        }
        let w = i1 - i0 + 1, h = j1 - j0 + 1
        let n = RegionGeometry.channels
        // `shape.polar`, the same doubles, skipping the curves a ray cannot meet.
        let rays = BoundaryRays(shape)
        var full = [Float](repeating: 0, count: w * h * n)
        let chunks = min(h, 16)
        // Borderline pixels per chunk (few: pixel centres on the boundary).
        var edges = [[(i: Int, j: Int, d: Double, r: Double)]](repeating: [], count: chunks)
        // Each chunk writes only its own rows of `full` and its own element
        // of `edges`, and `Parallel.run` returns after every chunk: the
        // buffers may be shared with the workers unsynchronised. A worker
        // per core takes every `workers`-th chunk.
        let workers = max(1, min(chunks, ThisProcess.cores))
        full.withUnsafeMutableBufferPointer { buffer in
            nonisolated(unsafe) let out = buffer
            edges.withUnsafeMutableBufferPointer { e in
                nonisolated(unsafe) let edgesOut = e
                Parallel.run(workers) { worker in
                    for c in stride(from: worker, to: chunks, by: workers) {
                        for j in (h * c / chunks) ..< (h * (c + 1) / chunks) {
                            for i in 0 ..< w {
                                let p = m.sourcePoint(i0 + i, j0 + j)
                                // As CPURenderer: only source points in the bbox move.
                                guard p.x >= b.minX, p.x <= b.maxX, p.y >= b.minY, p.y <= b.maxY,
                                      let (d, r) = rays.polar(at: p), let e = RegionGeometry.encode(d: d, r: r) else { continue }
                                out[(j * w + i) * n] = e.ratio
                                out[(j * w + i) * n + 1] = e.r
                                out[(j * w + i) * n + 2] = e.theta
                                if let axis {
                                    out[(j * w + i) * n + 3] = Float(RegionShape.pinCoordinate(p, center: shape.center, axis: axis, r: r))
                                }
                                if d > 0, r - d <= RegionGeometry.borderlineBand * r { edgesOut[c].append((i, j, d, r)) }
                            }
                        }
                    }
                }
            }
        }
        // Crop to the pixels that move.
        var minI = w, maxI = -1, minJ = h, maxJ = -1
        for j in 0 ..< h {
            for i in 0 ..< w where full[(j * w + i) * n + 1] != 0 {
                minI = min(minI, i); maxI = max(maxI, i)
                minJ = min(minJ, j); maxJ = max(maxJ, j)
            }
        }
        guard minI <= maxI else {
            self.init(empty: (), pin: pin)
            return
        }
        let cw = maxI - minI + 1, ch = maxJ - minJ + 1
        var cropped = [Float]()
        cropped.reserveCapacity(cw * ch * n)
        for j in minJ ... maxJ { cropped.append(contentsOf: full[((j * w + minI) * n) ..< ((j * w + maxI + 1) * n)]) }
        let borderline = edges.joined().map { e in ((e.j - minJ) * cw + (e.i - minI), e.d, e.r) }
        self.init(x0: i0 + minI, y0: j0 + minJ, width: cw, height: ch, values: cropped, borderline: borderline, pin: pin)
    }

    private init(x0: Int, y0: Int, width: Int, height: Int, values: [Float],
                 borderline: [(index: Int, d: Double, r: Double)], pin: PinSide?) {
        self.pin = pin
        self.x0 = x0
        self.y0 = y0
        self.width = width
        self.height = height
        self.values = values
        self.borderline = borderline
    }

    private init(empty: (), pin: PinSide?) {
        self.init(x0: 0, y0: 0, width: 0, height: 0, values: [], borderline: [], pin: pin)
    }
}
