import WobbleCore
internal import WobbleShaders

/// The shader sources and per-shape data a front end that draws frames
/// itself needs (the browser studio's WebGL2 page runs the same GLSL ES
/// 3.00 files as `GLESRenderer`, from the data the engine sends).
public enum ShaderData {
    /// Every file of `Shaders/` by name (`wobble.frag`, `common.glsl`, …),
    /// as embedded in the binary: the one source both renderers compile.
    public static var sources: [String: String] { EmbeddedShaders.all }
}

/// A region shape's displacement profile as `Shaders/wobble.frag` reads it
/// (`u_geometry`, one float `m` per output pixel of the region's box), for
/// a front end that uploads the texture itself, exactly as `GLESRenderer`
/// does: a frame's field is the blend `a + t·(b − a)` (in floats) of the
/// exact fields of two neighbouring grid peaks `k` and `k + 1` around the
/// frame's peak, with the shape's few borderline pixels then settled for
/// that peak (`blend(peak:)`, `field(grid:)`). Drawn at the image's own size.
public final class ShapeProfile {
    let geometry: RegionGeometry
    /// The box in output pixels.
    public var x0: Int { geometry.x0 }
    public var y0: Int { geometry.y0 }
    public var width: Int { geometry.width }
    public var height: Int { geometry.height }
    /// The exact grid fields computed so far, by grid index.
    private var fields: [Int: [Float]] = [:]
    /// The settled borderline pixels by peak (a classic model's peak holds
    /// for a whole cycle).
    private var blends: [Double: [(index: Int, m: Float)]] = [:]

    /// The profile of `shape` (with `pin`'s profile) on a `width`×`height`
    /// image; nil when the shape moves no pixel.
    public init?(shape: RegionShape, pin: PinSide?, width: Int, height: Int) {
        let m = OutputMapping(sourceWidth: width, sourceHeight: height, outputWidth: width, outputHeight: height)
        geometry = RegionGeometry(shape: shape, mapping: m, pin: pin)
        if geometry.isEmpty { return nil }
    }

    /// How a frame with peak `peak` (`M` before its limit to `R`) reads the
    /// grid: the fields `k` and `k + 1`, the weight `t` of the second (as
    /// the renderer rounds it, a float), and the borderline pixels whose
    /// settled `m` differs from the blend (index into the box, value).
    /// nil for a peak that moves nothing (0, not finite).
    public func blend(peak: Double) -> (k: Int, t: Float, settled: [(index: Int, m: Float)])? {
        guard peak > 0, peak.isFinite else { return nil }
        let k = DisplacementProfile.gridIndex(peak)
        let lo = DisplacementProfile.gridPeak(k), hi = DisplacementProfile.gridPeak(k + 1)
        let t = Float((peak - lo) / (hi - lo))
        if let cached = blends[peak] { return (k, t, cached) }
        var settled: [(index: Int, m: Float)] = []
        if !geometry.borderline.isEmpty {
            let a = field(grid: k), b = field(grid: k + 1)
            let n = RegionGeometry.channels
            // DisplacementProfile.settleBorderline, for these pixels only.
            for e in geometry.borderline {
                let blended = a[e.index] + t * (b[e.index] - a[e.index])
                let sigma = Double(geometry.values[e.index * n + 3])
                var m: Float = 0
                if RegionGeometry.moves(e, peak: peak, pin: geometry.pin, sigma: sigma) {
                    m = DisplacementProfile.encode(geometry.pin == nil ? RegionShape.hemisphere(d: e.d, r: e.r, peak: peak)
                        : RegionShape.pinned(ratio: e.d / e.r, sigma: sigma, r: e.r, peak: peak))
                }
                if m.bitPattern != blended.bitPattern { settled.append((e.index, m)) }
            }
        }
        if blends.count > 4096 { blends = [:] }
        blends[peak] = settled
        return (k, t, settled)
    }

    /// The exact field of grid peak `k` (`width`·`height` floats, rows top
    /// to bottom; all 0 for `k = 0`), computed once and kept.
    public func field(grid k: Int) -> [Float] {
        if let f = fields[k] { return f }
        let f = DisplacementProfile.field(geometry, peak: DisplacementProfile.gridPeak(k))
        fields[k] = f
        return f
    }

    /// Whether field `k` has been computed.
    public func hasField(_ k: Int) -> Bool { fields[k] != nil }
}
