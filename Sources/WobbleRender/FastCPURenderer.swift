import CWobbleKernel
import Foundation
import WobbleCore
import WobbleSystem

/// The CPU backend (`--backend cpu`): the reference's frames from each
/// region's static displacement profile (`DisplacementProfile`), so a moving
/// pixel costs a multiply-add per region over it and one bilinear sample,
/// with the rows of each box split over every core (`Parallel`) and the four
/// channels of a sample filtered at once (`SIMD4<Float>`); the rows one
/// region alone moves go to the C row kernel at the CPU's best level
/// (`RowKernel`: the same bytes as the Swift `movingRow`, its reference).
///
/// Everything else is the reference's (`CPURenderer`, which it keeps for
/// the still image, the area-averaged source and a cutout's layers): the same sample
/// positions (mirrored or clamped, `edges`), bilinear filtering on
/// premultiplied values divided by alpha again (an opaque source skips the
/// division, which cannot change a byte there), overlapping regions summed
/// or first-wins on the reference's own membership, a smaller output
/// area-averaged from the wobbled frame at the image's size, and cutouts
/// composited as the reference does at the profile's offset. It differs
/// from the reference only by float rounding: the sample position and
/// weights are single precision, the displacement magnitude a float, a
/// cutout's compositing four channels at once in single precision.
public final class FastCPURenderer: FrameRenderer {
    /// The source image.
    public let source: RGBAImage
    public var mapping: OutputMapping { reference.mapping }
    /// The exact renderer whose still image, sampled image and cutout
    /// compositing this one uses.
    let reference: CPURenderer
    /// The profiles of the shapes drawn, under the mapping the regions are
    /// evaluated at (the image's own size for a smaller output).
    let profiles: DisplacementProfiles
    /// Whether every pixel of the sampled image (the area-averaged source,
    /// or the source for a smaller output's wobble) is opaque.
    private let sampledOpaque: Bool
    private let sourceOpaque: Bool
    private var frameNumber = 0
    /// The kernel of the rows a region alone moves (the C kernel at the
    /// CPU's best level unless `WOBBLE_CPU` says otherwise: `RowKernel`).
    var rowKernel = RowKernel.chosen
    /// The threads a frame's rows are split over at most: the cores this
    /// process may use, read once (not per frame).
    private let cores = ThisProcess.cores

    /// A renderer of `source` at `outputWidth`×`outputHeight` (default: the
    /// source's size).
    public init(source: RGBAImage, outputWidth: Int? = nil, outputHeight: Int? = nil) {
        self.source = source
        let reference = CPURenderer(source: source, outputWidth: outputWidth, outputHeight: outputHeight)
        self.reference = reference
        let m = reference.mapping
        profiles = DisplacementProfiles(mapping: m.filtersWobbledFrame ? FrameDamage.fullSize(m) : m)
        sourceOpaque = FastCPURenderer.isOpaque(source)
        sampledOpaque = reference.sampled.width == source.width && reference.sampled.height == source.height
            ? sourceOpaque : FastCPURenderer.isOpaque(reference.sampled)
    }

    static func isOpaque(_ image: RGBAImage) -> Bool {
        image.pixels.withUnsafeBufferPointer { p in
            var k = 3
            while k < p.count {
                if p[k] != 255 { return false }
                k += 4
            }
            return true
        }
    }

    /// Renders `frame`: straight-alpha RGBA, rows top to bottom. Throws only
    /// when a new region's profile does not fit in the memory left.
    public func render(_ frame: FrameState) throws -> RGBAImage {
        guard !frame.regions.isEmpty else { return reference.still }
        var out = reference.still
        try render(frame, boxes: FrameDamage.boxes(frame, mapping: mapping), into: &out)
        return out
    }

    /// Sets the pixels of `boxes` in `image` to `render(frame)`'s; the
    /// others stay as they are. Throws only when a new region's profile
    /// does not fit in the memory left.
    public func render(_ frame: FrameState, boxes: [PixelRect], into image: inout RGBAImage) throws {
        let m = mapping
        guard image.width == m.outputWidth, image.height == m.outputHeight else { return }
        frameNumber += 1
        let layers = try self.layers(frame)
        defer { profiles.evict(keeping: frameNumber) }
        let clipped = boxes.map { $0.clipped(width: m.outputWidth, height: m.outputHeight) }.filter { !$0.isEmpty }
        for box in clipped { image.copy(box, from: reference.still) }
        guard m.filtersWobbledFrame else {
            // Every box's rows in one split over the cores (the boxes do not
            // overlap: `FrameDamage.boxes` merges them).
            image.pixels.withUnsafeMutableBufferPointer { dst in
                wobble(layers, frame: frame, mapping: m, boxes: clipped, sampled: reference.sampled, opaque: sampledOpaque,
                       factor: reference.factor, into: dst, origin: (0, 0), stride: m.outputWidth)
            }
            return
        }
        for box in clipped {
            // Smaller output: the wobbled frame at the image's size over the
            // box's footprint, area-averaged over each output pixel's.
            FrameDamage.drawDownscaled(box, mapping: m, source: source, into: &image) { dst, fp in
                wobble(layers, frame: frame, mapping: FrameDamage.fullSize(m), boxes: [fp], sampled: source, opaque: sourceOpaque,
                       factor: (1, 1), into: dst, origin: (fp.x0, fp.y0), stride: fp.width)
            }
        }
    }

    /// One moving region as a frame draws it: its profile's box and field
    /// for this frame's peak, and the offset per unit of `m`
    /// (`swing · direction`).
    struct Layer {
        var x0: Int, y0: Int, x1: Int, y1: Int
        var width: Int
        var field: MagnitudeField
        var vx: Double, vy: Double
        var cutout: CutoutLayer?
    }

    /// The layers of `frame`'s regions that move pixels, in prepare order.
    func layers(_ frame: FrameState) throws -> [Layer] {
        var out: [Layer] = []
        for r in frame.regions where r.movesPixels {
            let p = try profiles.profile(r.shape, pin: r.pin, frame: frameNumber)
            guard !p.isEmpty else { continue }
            out.append(Layer(x0: p.x0, y0: p.y0, x1: p.x0 + p.width, y1: p.y0 + p.height, width: p.width,
                             field: p.magnitudes(peak: r.peak), vx: r.direction.x * r.swing, vy: r.direction.y * r.swing,
                             cutout: r.cutout))
        }
        return out
    }

    /// The pixels of `boxes` (under `m`; they must not overlap) that the
    /// layers move, sampled from `sampled` (`factor`: its pixels per source
    /// pixel) into `dst` (pixel `(i, j)` at `((j − origin.y) · stride + i −
    /// origin.x) · 4`); one thread per core, each taking a band of every
    /// box's rows (started once a frame, not once a box).
    private func wobble(_ layers: [Layer], frame: FrameState, mapping m: OutputMapping, boxes allBoxes: [PixelRect], sampled: RGBAImage,
                        opaque: Bool, factor f: (x: Double, y: Double), into dst: UnsafeMutableBufferPointer<UInt8>,
                        origin: (x: Int, y: Int), stride: Int) {
        let boxes = allBoxes.filter { box in layers.contains { $0.x0 < box.x1 && box.x0 < $0.x1 && $0.y0 < box.y1 && box.y0 < $0.y1 } }
        guard !boxes.isEmpty else { return }
        let live = layers
        let sw = sampled.width, sh = sampled.height
        let sx = m.scaleX, sy = m.scaleY
        // Plain values for the rows (no reference counting per pixel): the
        // layers, which own the fields, live until this returns.
        let plain = live.filter { $0.cutout == nil }.map(Span.init), cut = live.filter { $0.cutout != nil }
        let cutSpans = cut.map(Span.init)
        let sum = frame.overlap == .sum, mirror = frame.edges == .mirror
        // A cutout's rows go eight pixels at a time where an output pixel is
        // a source pixel (its plate read as it is, not filtered).
        let unit = sx == 1 && sy == 1 && f.x == 1 && f.y == 1
        let rows = boxes.reduce(0) { $0 + $1.height }, widest = boxes.map(\.width).max() ?? 0
        let workers = max(1, min(cores, rows / 8))
        let image = source
        // The C kernel indexes the sampled image with 32-bit offsets.
        let kernel = sw * sh < Int(Int32.max) ? rowKernel : .swift
        nonisolated(unsafe) let out = dst
        withExtendedLifetime(live) {
            CutoutRows.with(cut.compactMap(\.cutout)) { cutoutRows in
                sampled.pixels.withUnsafeBytes { raw in
                    nonisolated(unsafe) let src = raw.bindMemory(to: UInt32.self).baseAddress!
                    image.pixels.withUnsafeBufferPointer { fullImage in
                        nonisolated(unsafe) let full = fullImage
                        plain.withUnsafeBufferPointer { plainSpans in
                            cutSpans.withUnsafeBufferPointer { cutoutSpans in
                                nonisolated(unsafe) let spans = plainSpans, cuts = cutoutSpans
                                // Each worker writes only its own rows of `dst`.
                                Parallel.run(workers) { worker in
                                    let dst32 = UnsafeMutableRawPointer(out.baseAddress!).assumingMemoryBound(to: UInt32.self)
                                    var runs: [(Int, Int)] = []
                                    var edges = [Int32](repeating: 0, count: kernel == .swift ? 0 : widest)
                                    // A band of each box's rows (the source rows it reads
                                    // stay in this core's cache), the boxes in one go.
                                    for box in boxes {
                                        var j = box.y0 + box.height * worker / workers
                                        let end = box.y0 + box.height * (worker + 1) / workers
                                        while j < end {
                                            let py = (Double(j) + 0.5) * sy
                                            let rowOut = (j - origin.y) * stride - origin.x
                                            // Runs of the row that one region alone moves: eight
                                            // pixels at a time (the same values whatever the box).
                                            runs.removeAll(keepingCapacity: true)
                                            for k in 0 ..< spans.count where FastCPURenderer.alone(k, spans, cuts, row: j) {
                                                let l = spans[k]
                                                let a = max(box.x0, l.x0), b = min(box.x1, l.x1)
                                                guard a < b else { continue }
                                                FastCPURenderer.movingRow(kernel, src, sw: sw, sh: sh, field: l.field + (j - l.y0) * l.width + (a - l.x0),
                                                                          count: b - a, out: dst32 + rowOut + a, x: Float((Double(a) + 0.5) * sx),
                                                                          stepX: Float(sx), y: Float(py), vx: Float(l.vx), vy: Float(l.vy),
                                                                          fx: Float(f.x), fy: Float(f.y), mirror: mirror, opaque: opaque, edges: &edges)
                                                runs.append((a, b))
                                            }
                                            for k in 0 ..< cuts.count where unit && FastCPURenderer.alone(k, cuts, spans, row: j) {
                                                let l = cuts[k]
                                                let a = max(box.x0, l.x0), b = min(box.x1, l.x1)
                                                guard a < b, let rows = cutoutRows[k] else { continue }
                                                rows.row(field: l.field + (j - l.y0) * l.width + (a - l.x0), count: b - a, x: a, y: j,
                                                         vx: Float(l.vx), vy: Float(l.vy), mirror: mirror, image: full, out: dst32 + rowOut + a)
                                                runs.append((a, b))
                                            }
                                            var i = box.x0
                                            while i < box.x1 {
                                                if let r = runs.first(where: { $0.0 == i }) {
                                                    i = r.1
                                                    continue
                                                }
                                                defer { i += 1 }
                                                // A cutout (the first that moves the pixel) draws
                                                // its object over its plate, as the reference.
                                                if cuts.count > 0 {
                                                    var hit = false
                                                    for k in 0 ..< cuts.count {
                                                        let l = cuts[k]
                                                        guard j >= l.y0, j < l.y1, i >= l.x0, i < l.x1 else { continue }
                                                        let mag = Double(l.field[(j - l.y0) * l.width + i - l.x0])
                                                        guard mag > 0, let layer = cut[k].cutout else { continue }
                                                        let px = (Double(i) + 0.5) * sx
                                                        dst32[rowOut + i] = FastCPURenderer.composite(layer, image: full, p: (px, py),
                                                                                                      q: (px + mag * l.vx, py + mag * l.vy),
                                                                                                      mirror: mirror)
                                                        hit = true
                                                        break
                                                    }
                                                    if hit { continue }
                                                }
                                                var ox = 0.0, oy = 0.0, moved = false
                                                for k in 0 ..< spans.count {
                                                    let l = spans[k]
                                                    guard j >= l.y0, j < l.y1, i >= l.x0, i < l.x1 else { continue }
                                                    let mag = Double(l.field[(j - l.y0) * l.width + i - l.x0])
                                                    guard mag > 0 else { continue }
                                                    ox += mag * l.vx
                                                    oy += mag * l.vy
                                                    moved = true
                                                    if !sum { break }
                                                }
                                                guard moved else { continue }
                                                let px = ((Double(i) + 0.5) * sx + ox) * f.x, qy = (py + oy) * f.y
                                                dst32[rowOut + i] = FastCPURenderer.sample(src, sw, sh, px, qy, mirror: mirror, opaque: opaque)
                                            }
                                            j += 1
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// A layer as the rows read it: plain values and the field's pointer.
    struct Span {
        var x0: Int, y0: Int, x1: Int, y1: Int, width: Int
        var field: UnsafeMutablePointer<Float>
        var vx: Double, vy: Double

        init(_ l: Layer) {
            x0 = l.x0; y0 = l.y0; x1 = l.x1; y1 = l.y1; width = l.width
            field = l.field.values.baseAddress!
            vx = l.vx; vy = l.vy
        }
    }

    /// Whether span `k` covers row `j` and no other span (plain or
    /// cutout) covering that row overlaps its columns: then it alone moves
    /// its pixels of the row (whatever box is drawn).
    @inline(__always)
    static func alone(_ k: Int, _ spans: UnsafeBufferPointer<Span>, _ cut: UnsafeBufferPointer<Span>, row j: Int) -> Bool {
        let l = spans[k]
        guard j >= l.y0, j < l.y1 else { return false }
        for c in cut where j >= c.y0 && j < c.y1 && c.x0 < l.x1 && l.x0 < c.x1 { return false }
        for o in 0 ..< spans.count where o != k {
            let c = spans[o]
            if j >= c.y0 && j < c.y1 && c.x0 < l.x1 && l.x0 < c.x1 { return false }
        }
        return true
    }

    /// `movingRow`'s pixels drawn by `kernel`: the Swift kernel itself, or
    /// the C kernel (the same bytes), whose pixels off the image's inside
    /// (listed in `edges`, room for `count`) are `sample`'s as the Swift
    /// kernel's are.
    @inline(__always)
    static func movingRow(_ kernel: RowKernel, _ src: UnsafePointer<UInt32>, sw: Int, sh: Int, field: UnsafePointer<Float>,
                          count: Int, out: UnsafeMutablePointer<UInt32>, x: Float, stepX: Float, y: Float, vx: Float, vy: Float,
                          fx: Float, fy: Float, mirror: Bool, opaque: Bool, edges: inout [Int32]) {
        guard case .c(let level) = kernel else {
            movingRow(src, sw: sw, sh: sh, field: field, count: count, out: out, x: x, stepX: stepX, y: y, vx: vx, vy: vy,
                      fx: fx, fy: fy, mirror: mirror, opaque: opaque)
            return
        }
        if edges.count < count { edges = [Int32](repeating: 0, count: count) }
        edges.withUnsafeMutableBufferPointer { e in
            let found = wobble_moving_row(level.rawValue, src, sw, sh, field, count, out, x, stepX, y, vx, vy, fx, fy,
                                          opaque ? 1 : 0, e.baseAddress)
            for k in 0 ..< found {
                let n = Int(e[k]), m = field[n]
                let px = (x + Float(n) * stepX + m * vx) * fx - 0.5
                let py = (y + m * vy) * fy - 0.5
                out[n] = sample(src, sw, sh, Double(px) + 0.5, Double(py) + 0.5, mirror: mirror, opaque: opaque)
            }
        }
    }

    /// `count` pixels of one row that one region alone moves: pixel `n` at
    /// source x `x + n·stepX`, row `y`, offset `m·(vx, vy)` with
    /// `m = field[n]` (skipped where 0), scaled by `(fx, fy)` into the
    /// sampled image (`sw × sh`). Positions, floors and weights for eight
    /// pixels at a time (`SIMD8<Float>`; floors by the 2²³ trick, exact for
    /// these sizes), then the four texels of each moving pixel filtered as
    /// `sample` does; a pixel whose four texels are not all inside the image
    /// (where mirroring or clamping would move them) is `sample`'s own at
    /// the same position. The last `count % 8` pixels take the same float
    /// operations one at a time, so a pixel's value does not depend on its
    /// lane.
    static func movingRow(_ src: UnsafePointer<UInt32>, sw: Int, sh: Int, field: UnsafePointer<Float>, count: Int,
                          out: UnsafeMutablePointer<UInt32>, x: Float, stepX: Float, y: Float, vx: Float, vy: Float,
                          fx: Float, fy: Float, mirror: Bool, opaque: Bool) {
        let magic: Float = 8_388_608
        let right = Float(sw - 1), bottom = Float(sh - 1)
        @inline(__always) func edge(_ px: Float, _ py: Float) -> UInt32 {
            sample(src, sw, sh, Double(px) + 0.5, Double(py) + 0.5, mirror: mirror, opaque: opaque)
        }
        var n = 0
        let lanes = SIMD8<Float>(0, 1, 2, 3, 4, 5, 6, 7)
        while n + 8 <= count {
            let m = UnsafeRawPointer(field + n).loadUnaligned(as: SIMD8<Float>.self)
            let moving = m .> 0
            if any(moving) {
                let px = (SIMD8<Float>(repeating: x) + (SIMD8<Float>(repeating: Float(n)) + lanes) * stepX + m * vx) * fx - 0.5
                let py = (SIMD8<Float>(repeating: y) + m * vy) * fy - 0.5
                var rx = (px + magic) - magic, ry = (py + magic) - magic
                rx.replace(with: rx - 1, where: rx .> px)
                ry.replace(with: ry - 1, where: ry .> py)
                let ax = px - rx, ay = py - ry
                let ix = unsafeBitCast(rx + magic, to: SIMD8<UInt32>.self) & 0x7F_FFFF
                let iy = unsafeBitCast(ry + magic, to: SIMD8<UInt32>.self) & 0x7F_FFFF
                let inside = (px .>= 0) .& (px .< right) .& (py .>= 0) .& (py .< bottom)
                for k in 0 ..< 8 where moving[k] {
                    out[n + k] = inside[k] ? blend(src + Int(iy[k]) * sw + Int(ix[k]), sw, ax[k], ay[k], opaque: opaque)
                        : edge(px[k], py[k])
                }
            }
            n += 8
        }
        while n < count {
            let m = field[n]
            if m > 0 {
                let px = (x + (Float(n) + 0) * stepX + m * vx) * fx - 0.5
                let py = (y + m * vy) * fy - 0.5
                if px >= 0, px < right, py >= 0, py < bottom {
                    var rx = (px + magic) - magic, ry = (py + magic) - magic
                    if rx > px { rx = rx - 1 }
                    if ry > py { ry = ry - 1 }
                    out[n] = blend(src + Int(ry) * sw + Int(rx), sw, px - rx, py - ry, opaque: opaque)
                } else {
                    out[n] = edge(px, py)
                }
            }
            n += 1
        }
    }

    /// The bilinear filter of the four texels at `p` (top left), `p + 1`,
    /// `p + w` and `p + w + 1` with fractions `ax`, `ay`, as `sample` does.
    @inline(__always)
    static func blend(_ p: UnsafePointer<UInt32>, _ w: Int, _ ax: Float, _ ay: Float, opaque: Bool) -> UInt32 {
        blend(channels(p[0]), channels(p[1]), channels(p[w]), channels(p[w + 1]), ax, ay, opaque: opaque)
    }

    @inline(__always)
    static func blend(_ c00: SIMD4<Float>, _ c10: SIMD4<Float>, _ c01: SIMD4<Float>, _ c11: SIMD4<Float>, _ ax: Float, _ ay: Float,
                      opaque: Bool) -> UInt32 {
        let w00 = (1 - ax) * (1 - ay), w10 = ax * (1 - ay), w01 = (1 - ax) * ay, w11 = ax * ay
        var v: SIMD4<Float>
        if opaque {
            v = c00 * w00 + c10 * w10 + c01 * w01 + c11 * w11
        } else {
            let a00 = c00[3] * w00, a10 = c10[3] * w10, a01 = c01[3] * w01, a11 = c11[3] * w11
            let alpha = a00 + a10 + a01 + a11
            if alpha >= 0.5 {
                v = (c00 * a00 + c10 * a10 + c01 * a01 + c11 * a11) / alpha
            } else {
                v = c00 * w00 + c10 * w10 + c01 * w01 + c11 * w11
            }
            v[3] = alpha
        }
        return packed(v)
    }

    /// A cutout's pixel at `p` (source pixels) whose object comes from `q`:
    /// the object (premultiplied) sampled bilinearly at `q` (mirrored into
    /// the image where `mirror`, else clamped to its edge; 0 outside the
    /// layer's box) over the plate at `p` (the image's own pixels outside
    /// the box), divided by the alpha again — the reference's compositing
    /// (`CPURenderer.composite`), in single precision four channels at once.
    @inline(__always)
    static func composite(_ layer: CutoutLayer, image: UnsafeBufferPointer<UInt8>, p: (x: Double, y: Double),
                          q: (x: Double, y: Double), mirror: Bool) -> UInt32 {
        let w = layer.imageWidth, h = layer.imageHeight, box = layer.box
        @inline(__always)
        func footprint(_ x: Double, _ y: Double, mirrored: Bool) -> (Int, Int, Int, Int, Float, Float) {
            let (x0, y0, x1, y1, ax, ay) = CPURenderer.cutoutFootprint(x, y, width: w, height: h, mirrored: mirrored)
            return (x0, y0, x1, y1, Float(ax), Float(ay))
        }
        var object = SIMD4<Float>(repeating: 0)
        layer.object.withUnsafeBytes { raw in
            let ob = raw.bindMemory(to: UInt32.self)
            let (x0, y0, x1, y1, ax, ay) = footprint(q.x, q.y, mirrored: mirror)
            @inline(__always) func tap(_ x: Int, _ y: Int, _ wt: Float) {
                guard x >= box.x0, x < box.x1, y >= box.y0, y < box.y1 else { return }
                object += wt * channels(ob[(y - box.y0) * box.width + x - box.x0])
            }
            tap(x0, y0, (1 - ax) * (1 - ay)); tap(x1, y0, ax * (1 - ay)); tap(x0, y1, (1 - ax) * ay); tap(x1, y1, ax * ay)
        }
        var plate = SIMD4<Float>(repeating: 0), straight = SIMD4<Float>(repeating: 0)
        layer.plate.withUnsafeBytes { raw in
            let pl = raw.bindMemory(to: UInt32.self)
            let im = UnsafeRawBufferPointer(image).bindMemory(to: UInt32.self)
            let (x0, y0, x1, y1, ax, ay) = footprint(p.x, p.y, mirrored: false)
            @inline(__always) func tap(_ x: Int, _ y: Int, _ wt: Float) {
                guard wt != 0 else { return }
                let inBox = x >= box.x0 && x < box.x1 && y >= box.y0 && y < box.y1
                let c = channels(inBox ? pl[(y - box.y0) * box.width + x - box.x0] : im[y * w + x])
                var premultiplied = c * (c[3] * FastCPURenderer.inverse255)
                premultiplied[3] = c[3]
                plate += wt * premultiplied
                straight += wt * c
            }
            tap(x0, y0, (1 - ax) * (1 - ay)); tap(x1, y0, ax * (1 - ay)); tap(x0, y1, (1 - ax) * ay); tap(x1, y1, ax * ay)
        }
        return over(object, plate: plate, straight: straight)
    }

    /// 1/255: a multiplication where a division would hold up the pixel.
    static let inverse255: Float = 1 / 255

    /// The object (premultiplied) over the plate (premultiplied, and its
    /// straight colour): `object + (1 − object alpha) · plate`, divided by
    /// the alpha again; where that alpha is under half a level, the plate's
    /// straight colour.
    @inline(__always)
    static func over(_ object: SIMD4<Float>, plate: SIMD4<Float>, straight: SIMD4<Float>) -> UInt32 {
        let keep = 1 - object[3] * inverse255
        let sum = object + keep * plate
        let alpha = sum[3]
        var v = alpha >= 0.5 ? sum * (255 / alpha) : straight
        v[3] = alpha
        return clampedAndPacked(v)
    }

    /// `v` clamped to [0, 255] and packed (`replace`, which the compiler
    /// inlines, where `clamped` went through a generic call).
    @inline(__always)
    static func clampedAndPacked(_ v: SIMD4<Float>) -> UInt32 {
        var v = v
        v.replace(with: 0, where: v .< 0)
        v.replace(with: 255, where: v .> 255)
        return packed(v)
    }

    /// A cutout layer's object and plate as the rows read them, for the
    /// duration of one `with`.
    struct CutoutRows: @unchecked Sendable {
        let layer: CutoutLayer
        let object: UnsafePointer<UInt32>, plate: UnsafePointer<UInt32>
        let box: PixelRect

        /// `body` with the rows of each of `layers` (nil for a layer with
        /// an empty box), in order.
        static func with<R>(_ layers: [CutoutLayer], _ body: ([CutoutRows?]) -> R) -> R {
            func next(_ k: Int, _ acc: [CutoutRows?]) -> R {
                guard k < layers.count else { return body(acc) }
                let l = layers[k]
                return l.object.withUnsafeBytes { ob in
                    l.plate.withUnsafeBytes { pl in
                        guard let o = ob.baseAddress, let p = pl.baseAddress, !l.box.isEmpty else { return next(k + 1, acc + [nil]) }
                        return next(k + 1, acc + [CutoutRows(layer: l, object: o.assumingMemoryBound(to: UInt32.self),
                                                             plate: p.assumingMemoryBound(to: UInt32.self), box: l.box)])
                    }
                }
            }
            return next(0, [])
        }

        /// `count` pixels of row `y` from column `x` that this cutout alone
        /// moves, an output pixel a source pixel: pixel `n`'s object sampled
        /// at `(x + n, y) + m·(vx, vy)` with `m = field[n]` (skipped where 0),
        /// over its plate at the pixel itself (the image's own outside the
        /// box) — `composite`'s values but for the sample position, taken in
        /// single precision. Positions, floors and weights eight pixels at a
        /// time, the last `count % 8` by the same float operations one at a
        /// time; a pixel whose object sample is not inside the image (where
        /// mirroring or clamping would move it) is `composite`'s own.
        func row(field: UnsafePointer<Float>, count: Int, x: Int, y: Int, vx: Float, vy: Float, mirror: Bool,
                 image: UnsafeBufferPointer<UInt8>, out: UnsafeMutablePointer<UInt32>) {
            guard let base = image.baseAddress else { return }
            let w = layer.imageWidth
            let im = UnsafeRawPointer(base).assumingMemoryBound(to: UInt32.self) + y * w
            let right = Float(w - 1), bottom = Float(layer.imageHeight - 1)
            let bx0 = box.x0, by0 = box.y0, bx1 = box.x1, by1 = box.y1, bw = box.width
            let plateRow: UnsafePointer<UInt32>? = y >= by0 && y < by1 ? plate + (y - by0) * bw : nil
            let magic: Float = 8_388_608
            let fy = Float(y)
            @inline(__always) func tap(_ tx: Int, _ ty: Int) -> SIMD4<Float> {
                tx >= bx0 && tx < bx1 && ty >= by0 && ty < by1 ? channels(object[(ty - by0) * bw + tx - bx0]) : SIMD4(repeating: 0)
            }
            /// The pixel at column `i` whose object comes from `(px, py)`
            /// (pixel centres at whole numbers).
            @inline(__always) func pixel(_ i: Int, _ m: Float, _ px: Float, _ py: Float) -> UInt32 {
                guard px >= 0, px <= right, py >= 0, py <= bottom else {
                    let p = (x: Double(i) + 0.5, y: Double(y) + 0.5)
                    return FastCPURenderer.composite(layer, image: image, p: p,
                                                     q: (p.x + Double(m) * Double(vx), p.y + Double(m) * Double(vy)), mirror: mirror)
                }
                var rx = (px + magic) - magic, ry = (py + magic) - magic
                if rx > px { rx = rx - 1 }
                if ry > py { ry = ry - 1 }
                let ix = Int(rx), iy = Int(ry), ax = px - rx, ay = py - ry
                let w00 = (1 - ax) * (1 - ay), w10 = ax * (1 - ay), w01 = (1 - ax) * ay, w11 = ax * ay
                let c00: SIMD4<Float>, c10: SIMD4<Float>, c01: SIMD4<Float>, c11: SIMD4<Float>
                if ix >= bx0 && ix + 1 < bx1 && iy >= by0 && iy + 1 < by1 {
                    let r = object + (iy - by0) * bw + ix - bx0
                    c00 = channels(r[0]); c10 = channels(r[1]); c01 = channels(r[bw]); c11 = channels(r[bw + 1])
                } else {
                    c00 = tap(ix, iy); c10 = tap(ix + 1, iy); c01 = tap(ix, iy + 1); c11 = tap(ix + 1, iy + 1)
                }
                let ob = w00 * c00 + w10 * c10 + w01 * c01 + w11 * c11
                let c: SIMD4<Float>
                if let plateRow, i >= bx0, i < bx1 { c = channels(plateRow[i - bx0]) } else { c = channels(im[i]) }
                if c[3] == 255 {
                    // An opaque plate: the premultiplied plate is its colour and
                    // the sum's alpha 255 (to within float rounding, which the
                    // division would only add), so no division.
                    return FastCPURenderer.clampedAndPacked(ob + (1 - ob[3] * FastCPURenderer.inverse255) * c)
                }
                var premultiplied = c * (c[3] * FastCPURenderer.inverse255)
                premultiplied[3] = c[3]
                return FastCPURenderer.over(ob, plate: premultiplied, straight: c)
            }
            var n = 0
            let lanes = SIMD8<Float>(0, 1, 2, 3, 4, 5, 6, 7)
            while n + 8 <= count {
                let m = UnsafeRawPointer(field + n).loadUnaligned(as: SIMD8<Float>.self)
                let moving = m .> 0
                if any(moving) {
                    let px = (SIMD8<Float>(repeating: Float(x + n)) + lanes) + m * vx
                    let py = SIMD8<Float>(repeating: fy) + m * vy
                    for k in 0 ..< 8 where moving[k] {
                        out[n + k] = pixel(x + n + k, m[k], px[k], py[k])
                    }
                }
                n += 8
            }
            while n < count {
                let m = field[n]
                if m > 0 {
                    out[n] = pixel(x + n, m, Float(x + n) + m * vx, fy + m * vy)
                }
                n += 1
            }
        }
    }

    /// The four bytes of a pixel as floats: each byte put in the low
    /// mantissa bits of 2²³ and 2²³ taken away again (exact; vector
    /// instructions only, where the generic integer-to-float conversion of
    /// a SIMD vector goes lane by lane through the standard library).
    @inline(__always)
    static func channels(_ p: UInt32) -> SIMD4<Float> {
        let bytes = SIMD4<UInt32>(truncatingIfNeeded: unsafeBitCast(p, to: SIMD4<UInt8>.self))
        return unsafeBitCast(bytes | 0x4B00_0000, to: SIMD4<Float>.self) - 8_388_608
    }

    /// Four channel values in [0, 255] (convex combinations of bytes, with
    /// non-negative weights: no clamping needed) rounded to bytes (to nearest; a
    /// tie to even, where the reference rounds it up: a level apart, for
    /// values exactly halfway) and packed into a pixel, by the same trick
    /// the other way round.
    @inline(__always)
    static func packed(_ v: SIMD4<Float>) -> UInt32 {
        let bits = unsafeBitCast(v + 12_582_912, to: SIMD4<UInt32>.self)
        return unsafeBitCast(SIMD4<UInt8>(truncatingIfNeeded: bits), to: UInt32.self)
    }

    /// The bilinear sample of `src` (`w × h` pixels, RGBA as one `UInt32`
    /// each) at `(x, y)` of its own pixel coordinates, as
    /// `CPURenderer.sample` takes it: mirrored into the image or clamped to
    /// the edge, filtered on premultiplied values and divided by the
    /// filtered alpha again (the straight filtered colour where that alpha
    /// is under half a level); `opaque`: every alpha is 255, so the
    /// division gives the straight filter back and is skipped.
    @inline(__always)
    static func sample(_ src: UnsafePointer<UInt32>, _ w: Int, _ h: Int, _ x: Double, _ y: Double, mirror: Bool,
                       opaque: Bool) -> UInt32 {
        let px = mirror ? CPURenderer.mirror(x, Double(w)) : x
        let py = mirror ? CPURenderer.mirror(y, Double(h)) : y
        var fx = px - 0.5, fy = py - 0.5
        if !(fx > 0) { fx = 0 } else if fx > Double(w - 1) { fx = Double(w - 1) }
        if !(fy > 0) { fy = 0 } else if fy > Double(h - 1) { fy = Double(h - 1) }
        let x0 = Int(fx), y0 = Int(fy)
        let x1 = x0 + 1 < w ? x0 + 1 : w - 1, y1 = y0 + 1 < h ? y0 + 1 : h - 1
        let ax = Float(fx - Double(x0)), ay = Float(fy - Double(y0))
        let r0 = src + y0 * w, r1 = src + y1 * w
        return blend(channels(r0[x0]), channels(r0[x1]), channels(r1[x0]), channels(r1[x1]), ax, ay, opaque: opaque)
    }
}
