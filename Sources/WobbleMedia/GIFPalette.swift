internal import CImageQuant
import WobbleCore
import WobbleSystem
#if canImport(Glibc)
import Glibc
#endif

/// Makes OpenMP parallel regions started from the calling thread use one
/// thread. libimagequant is built with OpenMP: on two cores its spinning
/// worker threads took the renderer's core (the palette took 0.3–0.7 s
/// instead of 0.2 s), and its k-means sums depend on the thread count, so
/// one thread also makes the palette the same on every machine. Found with
/// `dlsym` because no OpenMP header is part of the package.
private func useOneOpenMPThread() {
    typealias SetNumThreads = @convention(c) (Int32) -> Void
    guard let sym = dlsym(nil, "omp_set_num_threads") else { return }
    unsafeBitCast(sym, to: SetNumThreads.self)(1)
}

/// The one palette of a GIF, built once from the still frame with
/// libimagequant (this file owns every libimagequant call), plus the still
/// frame's dithered indices.
///
/// The wobble only moves the still image's own colours around (and the
/// blends bilinear sampling makes of neighbours), so a palette quantised
/// from the still serves every frame. Index `transparent` (after the opaque
/// colours) is reserved: for pixels with alpha < 128 (GIF transparency is binary) and for
/// "unchanged" pixels of the later frames.
struct GIFPalette {
    /// How many pixels of the still the quantiser looks at, at most
    /// (roughly): 640×480.
    static let samplePixels = 640 * 480
    /// Opaque colours, `r, g, b` per entry (`colorCount * 3` bytes).
    var rgb: [UInt8]
    /// Number of opaque colours (1...255).
    var colorCount: Int
    /// The reserved transparent index, `== colorCount`.
    var transparent: UInt8 { UInt8(colorCount) }
    /// Size of the GIF colour table: a power of two > `colorCount`.
    var tableSize: Int {
        var n = 2
        while n <= colorCount { n *= 2 }
        return n
    }
    /// The still frame mapped to the palette with Floyd–Steinberg dithering
    /// (`width * height` indices).
    var stillIndices: [UInt8]

    /// Quantises `still`: at most 255 opaque colours, `speed` 1 (best) ... 10,
    /// `dithering` 0 (nearest colour) ... 1 (full Floyd–Steinberg) for the
    /// still's own indices.
    init(still: RGBAImage, speed: Int32, dithering: Float, maxColors: Int = 255, what: String) throws {
        let maxColors = Int32(min(255, max(2, maxColors)))
        let w = still.width, h = still.height
        // Binary alpha, as the GIF shows it: the quantiser then spends no
        // colours on alpha variations, and transparent pixels' RGB do not
        // pull the palette.
        var flat = still.pixels
        var transparentPixels = 0
        flat.withUnsafeMutableBufferPointer { p in
            var i = 0
            while i < p.count {
                if p[i + 3] < 128 {
                    p[i] = 0; p[i + 1] = 0; p[i + 2] = 0; p[i + 3] = 0
                    transparentPixels += 1
                } else {
                    p[i + 3] = 255
                }
                i += 4
            }
        }
        func fail(_ fn: String, _ e: liq_error) -> MediaError {
            MediaError("\(what): libimagequant \(fn) failed (error \(e.rawValue))")
        }
        useOneOpenMPThread()
        guard let attr = liq_attr_create() else { throw MediaError("\(what): libimagequant: out of memory") }
        defer { liq_attr_destroy(attr) }
        // 255 opaque colours + the reserved index; with transparent pixels
        // the quantiser's own transparent entry becomes that index.
        var e = liq_set_max_colors(attr, transparentPixels > 0 ? maxColors + 1 : maxColors)
        guard e == LIQ_OK else { throw fail("liq_set_max_colors", e) }
        e = liq_set_speed(attr, speed)
        guard e == LIQ_OK else { throw fail("liq_set_speed", e) }
        e = liq_set_quality(attr, 0, 100)
        guard e == LIQ_OK else { throw fail("liq_set_quality", e) }

        var liqIndices = [UInt8](repeating: 0, count: w * h)
        var liqColors: [(UInt8, UInt8, UInt8, UInt8)] = []
        try flat.withUnsafeBytes { buf in
            guard let img = liq_image_create_rgba(attr, buf.baseAddress!, Int32(w), Int32(h), 0) else {
                throw MediaError("\(what): libimagequant liq_image_create_rgba failed")
            }
            defer { liq_image_destroy(img) }
            // The palette comes from at most ~`GIFPalette.samplePixels`
            // pixels (an even grid of them): its cost then does not grow with
            // the output size, and the remap below still sees every pixel.
            guard let hist = liq_histogram_create(attr) else { throw MediaError("\(what): libimagequant: out of memory") }
            defer { liq_histogram_destroy(hist) }
            let step = max(1, Int((Double(w * h) / Double(GIFPalette.samplePixels)).squareRoot().rounded(.up)))
            if step == 1 {
                e = liq_histogram_add_image(hist, attr, img)
                guard e == LIQ_OK else { throw fail("liq_histogram_add_image", e) }
            } else {
                let sw = (w + step - 1) / step, sh = (h + step - 1) / step
                var sample = [UInt8](repeating: 0, count: sw * sh * 4)
                let src = buf.bindMemory(to: UInt8.self)
                for y in 0..<sh {
                    for x in 0..<sw {
                        let from = ((y * step) * w + x * step) * 4, to = (y * sw + x) * 4
                        for c in 0..<4 { sample[to + c] = src[from + c] }
                    }
                }
                try sample.withUnsafeBytes { sb in
                    guard let small = liq_image_create_rgba(attr, sb.baseAddress!, Int32(sw), Int32(sh), 0) else {
                        throw MediaError("\(what): libimagequant liq_image_create_rgba failed")
                    }
                    defer { liq_image_destroy(small) }
                    e = liq_histogram_add_image(hist, attr, small)
                    guard e == LIQ_OK else { throw fail("liq_histogram_add_image", e) }
                }
            }
            var result: OpaquePointer? = nil
            let q = liq_histogram_quantize(hist, attr, &result)
            guard q == LIQ_OK, let res = result else { throw fail("liq_histogram_quantize", q) }
            defer { liq_result_destroy(res) }
            e = liq_set_dithering_level(res, dithering)
            guard e == LIQ_OK else { throw fail("liq_set_dithering_level", e) }
            e = liqIndices.withUnsafeMutableBytes { liq_write_remapped_image(res, img, $0.baseAddress!, $0.count) }
            guard e == LIQ_OK else { throw fail("liq_write_remapped_image", e) }
            // The palette may be refined by remapping: read it afterwards.
            guard let pal = liq_get_palette(res) else { throw MediaError("\(what): libimagequant liq_get_palette failed") }
            let n = Int(pal.pointee.count)
            withUnsafeBytes(of: pal.pointee.entries) { raw in
                for i in 0..<n {
                    liqColors.append((raw[i * 4], raw[i * 4 + 1], raw[i * 4 + 2], raw[i * 4 + 3]))
                }
            }
        }
        // Compact: opaque entries keep their order, transparent ones map to
        // the reserved index.
        var rgb: [UInt8] = []
        var map = [Int](repeating: -1, count: 256)
        for (i, c) in liqColors.enumerated() where c.3 >= 128 && rgb.count < 255 * 3 {
            map[i] = rgb.count / 3
            rgb += [c.0, c.1, c.2]
        }
        if rgb.isEmpty { rgb = [0, 0, 0] }  // an all-transparent still: keep one colour
        let count = rgb.count / 3
        let t = UInt8(count)
        let nearest = GIFNearestColor(rgb: rgb)
        var indices = [UInt8](repeating: t, count: w * h)
        still.pixels.withUnsafeBufferPointer { px in
            for i in 0..<(w * h) {
                if px[i * 4 + 3] < 128 { continue }
                let m = map[Int(liqIndices[i])]
                indices[i] = m >= 0 ? UInt8(m) : nearest.index(px[i * 4], px[i * 4 + 1], px[i * 4 + 2])
            }
        }
        self.rgb = rgb
        self.colorCount = count
        self.stillIndices = indices
    }
}

/// Exact nearest palette colour (squared RGB distance, lowest index on a
/// tie) through a lazily filled 32×32×32 grid of cells, each holding the
/// palette entries that can be nearest to some colour inside the cell
/// (locally sorted search, Heckbert 1982). Deterministic and fast: a few
/// candidates per lookup.
final class GIFNearestColor {
    private let pr: [Int32], pg: [Int32], pb: [Int32]
    /// Per cell: start of its list in `candidates`, or -1 (not built yet).
    private var cellStart = [Int32](repeating: -1, count: 32768)
    private var cellCount = [UInt16](repeating: 0, count: 32768)
    private var candidates: [UInt8] = []

    init(rgb: [UInt8]) {
        let n = rgb.count / 3
        pr = (0..<n).map { Int32(rgb[$0 * 3]) }
        pg = (0..<n).map { Int32(rgb[$0 * 3 + 1]) }
        pb = (0..<n).map { Int32(rgb[$0 * 3 + 2]) }
        candidates.reserveCapacity(32768)
    }

    /// The palette index nearest to `(r, g, b)`.
    @inline(__always)
    func index(_ r: UInt8, _ g: UInt8, _ b: UInt8) -> UInt8 {
        let cell = Int(r >> 3) << 10 | Int(g >> 3) << 5 | Int(b >> 3)
        var start = Int(cellStart[cell])
        if start < 0 { start = build(cell) }
        let count = Int(cellCount[cell])
        if count == 1 { return candidates[start] }
        let r = Int32(r), g = Int32(g), b = Int32(b)
        var best: UInt8 = 0
        var bestD = Int32.max
        candidates.withUnsafeBufferPointer { c in
            pr.withUnsafeBufferPointer { pr in
                pg.withUnsafeBufferPointer { pg in
                    pb.withUnsafeBufferPointer { pb in
                        for k in start..<(start + count) {
                            let i = Int(c[k])
                            let dr = pr[i] &- r, dg = pg[i] &- g, db = pb[i] &- b
                            let d = dr &* dr &+ dg &* dg &+ db &* db
                            if d < bestD { bestD = d; best = c[k] }
                        }
                    }
                }
            }
        }
        return best
    }

    private func build(_ cell: Int) -> Int {
        let lo = (Int32(cell >> 10) << 3, Int32((cell >> 5) & 31) << 3, Int32(cell & 31) << 3)
        let hi = (lo.0 + 7, lo.1 + 7, lo.2 + 7)
        func axis(_ p: Int32, _ l: Int32, _ h: Int32) -> (min: Int32, max: Int32) {
            let dmin: Int32 = p < l ? l - p : (p > h ? p - h : 0)
            let dmax = max(abs(p - l), abs(p - h))
            return (dmin * dmin, dmax * dmax)
        }
        let n = pr.count
        var minD = [Int32](repeating: 0, count: n)
        var bound = Int32.max
        for i in 0..<n {
            let a = axis(pr[i], lo.0, hi.0), b = axis(pg[i], lo.1, hi.1), c = axis(pb[i], lo.2, hi.2)
            minD[i] = a.min + b.min + c.min
            bound = min(bound, a.max + b.max + c.max)
        }
        let start = candidates.count
        for i in 0..<n where minD[i] <= bound { candidates.append(UInt8(i)) }
        cellStart[cell] = Int32(start)
        cellCount[cell] = UInt16(candidates.count - start)
        return start
    }
}
