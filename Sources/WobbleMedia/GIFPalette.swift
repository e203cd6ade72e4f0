internal import CImageQuant
import WobbleCore
import WobbleSystem
import Foundation

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
/// frame's dithered indices (`GIFDither`).
///
/// The wobble only moves the still image's own colours around (and the
/// blends bilinear sampling makes of neighbours), so a palette quantised
/// from the still serves every frame. Index `transparent` (after the opaque
/// colours) is reserved: for pixels with alpha < 128 (GIF transparency is binary) and for
/// "unchanged" pixels of the later frames.
struct GIFPalette {
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
    /// How many entries the quantiser was given (see `Histogram`).
    var histogramEntries: Int
    /// CPU seconds that building it spent on threads other than the
    /// caller's (the steps beside the quantiser, `refine`, the remap).
    var helperCPUSeconds: Double

    /// Quantises `still`: at most 255 opaque colours, `speed` 1 (best) ... 10,
    /// `dithering` 0 (nearest colour) ... 1 (full Floyd–Steinberg) for the
    /// still's own indices.
    ///
    /// The quantiser is given a histogram of the still's colours in small
    /// cubes (`Histogram`), not its pixels: its work grows with the number
    /// of distinct entries (a 480×360 photo has 68,323 distinct colours,
    /// 15,231 entries here). Its colours then move to the mean of the
    /// still's pixels nearest to them (`refine`), and the still is remapped
    /// (dithered) to exactly those colours, every pixel seen.
    ///
    /// Two threads where the machine has them, the same bytes whatever its
    /// cores: while the quantiser runs (one thread, its longest step), a
    /// second makes the still's edge map (`GIFDither`) and the distinct
    /// colours `refine` needs; `refine` then sums in two chunks, and the
    /// still's two bands of rows are remapped at once (`GIFDither`).
    /// Measured on the 480×360 latte still as a clip's palette (speed 2,
    /// release build, 2 cores; CPU time, each step on its thread): the
    /// quantiser 46–54 ms, the edge map and the distinct colours 6 ms beside
    /// it, `refine` 12 ms, the remap 8.5 ms a band: about 90 ms of CPU
    /// (libimagequant's own remap took 14 ms a band).
    ///
    /// `oneFrame`: the palette of a GIF of one frame, which is most of that
    /// GIF's cost (a clip's palette serves every frame): see `OneFrame`.
    /// The remap is the same either way.
    init(still: RGBAImage, speed: Int32, oneFrame: Bool = false, dithering: Float, maxColors: Int = 255, what: String) throws {
        let maxColors = Int32(min(255, max(2, maxColors)))
        let w = still.width, h = still.height
        // Binary alpha, as the GIF shows it: the quantiser then spends no
        // colours on alpha variations, and transparent pixels' RGB do not
        // pull the palette.
        var flat = still.pixels
        var gathered = Histogram(binarizing: &flat, denseShare: oneFrame ? OneFrame.denseShare : Histogram.denseShare)
        // A still of at most `maxColors` opaque colours is its own palette,
        // every colour kept exactly: the quantiser would merge colours that
        // share one of the histogram's cubes (#FEFEFE and #FFFFFF, a grey
        // ramp's neighbours), and there is nothing to dither.
        if let exact = GIFPalette.exactColours(flat, limit: Int(maxColors)) {
            let histogram = gathered
            rgb = exact.rgb.isEmpty ? [0, 0, 0] : exact.rgb  // an all-transparent still: keep one colour
            colorCount = rgb.count / 3
            let t = UInt8(colorCount)
            stillIndices = t == GIFPalette.clear ? exact.indices : exact.indices.map { $0 == GIFPalette.clear ? t : $0 }
            histogramEntries = histogram.entries.count
            helperCPUSeconds = 0
            return
        }
        // Fewer cubes than the palette has colours (a ramp of 256 greys is
        // 64 cubes) would leave colours unused and band: the quantiser is
        // given the still's distinct colours then.
        if gathered.entries.filter({ $0.color.a >= 128 }).count < Int(maxColors) {
            gathered.useDistinctColours(flat)
        }
        let histogram = gathered
        // 255 opaque colours + the reserved index; with transparent pixels
        // the quantiser's own transparent entry becomes that index.
        let liqMax = histogram.transparentPixels > 0 ? maxColors + 1 : maxColors
        // What `refine` sums over: the still's distinct colours, or for one
        // frame the histogram's cubes (unless they are few: a still of few
        // colours keeps them exactly).
        let cubes = oneFrame && histogram.entries.count > Int(maxColors) ? Distinct(histogram) : nil
        let quantizerSpeed = oneFrame ? OneFrame.quantizerSpeed : speed
        // The still is remapped in bands of rows, on as many threads (the
        // same bands whatever the cores: the same bytes).
        let bands = h >= GIFPalette.bandRows * 2 ? 2 : 1
        var colors: [liq_color] = [], edges: [UInt8]? = nil
        var helperCPU = 0.0
        try flat.withUnsafeBytes { buf in
            nonisolated(unsafe) let pixels = buf
            // While the quantiser runs on one thread, a second one makes
            // what the steps after it need and the palette does not change:
            // the still's edge map, the distinct colours.
            let found = ResultSlots<Result<[liq_color], any Error>>(1, initial: .success([]))
            let edgeMap = ResultSlots<[UInt8]?>(1, initial: nil)
            let distinct = ResultSlots(1, initial: Distinct())
            helperCPU += GIFPalette.parallel(2) { c in
                if c == 0 {
                    found.set(0, Result {
                        try GIFPalette.quantize(histogram, maxColors: liqMax, speed: quantizerSpeed, what: what)
                    })
                } else {
                    edgeMap.set(0, GIFDither.edgeMap(pixels, width: w, height: h))
                    distinct.set(0, cubes ?? Distinct(pixels))
                }
            }
            // The quantiser saw cube means: a few rounds of k-means over the
            // still's own pixels move each colour to the mean of the pixels
            // nearest to it, then the still is remapped to exactly those
            // colours.
            colors = try found.get(0).get()
            helperCPU += GIFPalette.refine(&colors, distinct: distinct.get(0), rounds: GIFPalette.refineRounds)
            edges = edgeMap.get(0)
        }
        // The opaque colours in order; transparent entries become the
        // reserved index.
        var rgb: [UInt8] = []
        for c in colors where c.a >= 128 && rgb.count < 255 * 3 { rgb += [c.r, c.g, c.b] }
        if rgb.isEmpty { rgb = [0, 0, 0] }  // an all-transparent still: keep one colour
        let count = rgb.count / 3
        let dither = GIFDither(rgb: rgb, transparent: UInt8(count), edges: edges)
        let parts = ResultSlots<[UInt8]>(bands, initial: [])
        helperCPU += flat.withUnsafeBytes { buf in
            nonisolated(unsafe) let pixels = buf
            return GIFPalette.parallel(bands) { c in
                parts.set(c, dither.remap(pixels, width: w, height: h, rows: h * c / bands, h * (c + 1) / bands,
                                          dithering: dithering))
            }
        }
        let indices = (0..<bands).flatMap { parts.get($0) }
        self.rgb = rgb
        self.colorCount = count
        self.stillIndices = indices
        histogramEntries = histogram.entries.count
        helperCPUSeconds = helperCPU
    }

    /// A transparent pixel's index in `exactColours` (a palette of at most
    /// 255 colours has no index 255).
    static let clear: UInt8 = 255

    /// The opaque colours of `pixels` (RGBA, alpha already 0 or 255) in
    /// the order they first appear, and each pixel's index among them
    /// (`clear` for a transparent one); nil as soon as there are more than
    /// `limit`, which a photo shows within its first few hundred pixels.
    static func exactColours(_ pixels: [UInt8], limit: Int) -> (rgb: [UInt8], indices: [UInt8])? {
        let n = pixels.count / 4
        var index: [UInt32: UInt8] = [:]
        var rgb: [UInt8] = []
        var indices = [UInt8](repeating: clear, count: n)
        var last: UInt32 = .max, lastIndex: UInt8 = 0
        return pixels.withUnsafeBufferPointer { px -> (rgb: [UInt8], indices: [UInt8])? in
            for i in 0 ..< n where px[i * 4 + 3] >= 128 {
                let key = UInt32(px[i * 4]) << 16 | UInt32(px[i * 4 + 1]) << 8 | UInt32(px[i * 4 + 2])
                if key != last {
                    if let k = index[key] {
                        lastIndex = k
                    } else {
                        guard index.count < limit else { return nil }
                        lastIndex = UInt8(index.count)
                        index[key] = lastIndex
                        rgb += [px[i * 4], px[i * 4 + 1], px[i * 4 + 2]]
                    }
                    last = key
                }
                indices[i] = lastIndex
            }
            return (rgb, indices)
        }
    }

    /// A still of fewer than twice this many rows is remapped in one band.
    /// (Two bands: the Floyd–Steinberg error does not cross from the first
    /// to the second; the same PSNR and bytes within a few dozen.)
    static let bandRows = 32

    /// What a one-frame GIF's palette does differently (`oneFrame`).
    ///
    /// Measured on the 480×360 latte still (release build, 2 cores, CPU
    /// time, each step timed on its thread): with these settings the
    /// palette takes 43–47 ms (the quantiser 14.5, the histogram's cubes
    /// for `refine` and the edge map 3 beside it, `refine` 5, the remap 8.5
    /// a band), for 40.43 dB and 124,907 bytes (as a clip's first frame
    /// about 90 ms: see `init`).
    enum OneFrame {
        /// libimagequant's speed for the quantiser: at 6 the palette takes
        /// about 110 ms of wall time instead of 155 at 2 (40.44 dB instead
        /// of 40.52, 0.3% more bytes); at 7 (one median cut, one k-means
        /// round) it loses 0.14 dB, at 8 and above the input is posterised
        /// (0.17 dB and more).
        static let quantizerSpeed: Int32 = 6
        /// The histogram's cubes split in eight where they hold more than
        /// this share of the pixels (a clip's: `Histogram.denseShare`):
        /// 11,884 entries instead of 15,231, the quantiser a fifth faster;
        /// fewer (9,426 at 1/1500, or 5-bit cubes) lose 0.05 dB and more.
        static let denseShare = 1.0 / 3000
    }

    /// libimagequant's attributes: at most `maxColors`, `speed`, and no
    /// quality floor; one OpenMP thread for the calling thread.
    static func attributes(maxColors: Int32, speed: Int32, what: String) throws -> OpaquePointer {
        useOneOpenMPThread()
        guard let attr = liq_attr_create() else { throw MediaError("\(what): libimagequant: out of memory") }
        var e = liq_set_max_colors(attr, maxColors)
        if e == LIQ_OK { e = liq_set_speed(attr, speed) }
        if e == LIQ_OK { e = liq_set_quality(attr, 0, 100) }
        guard e == LIQ_OK else {
            liq_attr_destroy(attr)
            throw failure(what, "liq_set_max_colors/speed/quality", e)
        }
        return attr
    }

    static func failure(_ what: String, _ fn: String, _ e: liq_error) -> MediaError {
        MediaError("\(what): libimagequant \(fn) failed (error \(e.rawValue))")
    }

    /// The quantiser's palette for `histogram` (RGBA; with transparent
    /// pixels one entry is transparent).
    static func quantize(_ histogram: Histogram, maxColors: Int32, speed: Int32, what: String) throws -> [liq_color] {
        let attr = try attributes(maxColors: maxColors, speed: speed, what: what)
        defer { liq_attr_destroy(attr) }
        guard let hist = liq_histogram_create(attr) else { throw MediaError("\(what): libimagequant: out of memory") }
        defer { liq_histogram_destroy(hist) }
        let e = histogram.entries.withUnsafeBufferPointer {
            liq_histogram_add_colors(hist, attr, $0.baseAddress!, Int32($0.count), 0)
        }
        guard e == LIQ_OK else { throw failure(what, "liq_histogram_add_colors", e) }
        var first: OpaquePointer? = nil
        let q = liq_histogram_quantize(hist, attr, &first)
        guard q == LIQ_OK, let quantized = first else { throw failure(what, "liq_histogram_quantize", q) }
        defer { liq_result_destroy(quantized) }
        guard let found = liq_get_palette(quantized) else { throw MediaError("\(what): libimagequant liq_get_palette failed") }
        return withUnsafeBytes(of: found.pointee.entries) { raw in
            (0..<Int(found.pointee.count)).map { liq_color(r: raw[$0 * 4], g: raw[$0 * 4 + 1], b: raw[$0 * 4 + 2], a: raw[$0 * 4 + 3]) }
        }
    }

    /// Runs `body(0) ... body(chunks - 1)` at once where threads can be
    /// started (`Parallel`) and returns the CPU seconds the threads other
    /// than the caller's spent in it (the caller's own are in its thread CPU
    /// time).
    static func parallel(_ chunks: Int, _ body: @Sendable (Int) -> Void) -> Double {
        let me = SystemThread.Identity.current
        let cpu = ResultSlots(chunks, initial: 0.0)
        Parallel.run(chunks) { c in
            let t0 = threadCPUTime()
            body(c)
            cpu.set(c, SystemThread.isCurrent(me) ? 0 : threadCPUTime() - t0)
        }
        return (0..<chunks).reduce(0) { $0 + cpu.get($1) }
    }

    /// Rounds of k-means (`refine`) after the quantiser.
    static let refineRounds = 3

    /// Lloyd's k-means in RGB over the opaque pixels `distinct` counts:
    /// each opaque colour of `colors` moves to the mean of the pixels whose
    /// nearest colour it is (squared RGB distance, lowest index on a tie),
    /// `rounds` times; a colour no pixel is nearest to stays. Transparent
    /// entries stay as they are.
    ///
    /// It works on the distinct colours with their counts, not the pixels
    /// (a 480×360 photo has 68,323 distinct colours in 172,800 pixels),
    /// searches again only those whose nearest colour may have changed,
    /// and sums in `chunks` runs on as many threads: the sums are
    /// integers, so the result is exactly that of the plain version over
    /// every pixel, whatever the chunks and the cores. Returns the CPU
    /// seconds spent on threads other than the caller's.
    @discardableResult
    static func refine(_ colors: inout [liq_color], distinct: Distinct, rounds: Int, chunks: Int = 2) -> Double {
        let opaque = colors.indices.filter { colors[$0].a >= 128 }
        guard !opaque.isEmpty, rounds > 0 else { return 0 }
        var helperCPU = 0.0
        let total = distinct.keys.count
        let chunks = max(1, min(chunks, total / 4096 + 1))
        let width = opaque.count * 4
        var sums = [Int](repeating: 0, count: width * chunks)
        // Each distinct colour's nearest colour in the round before, and
        // per colour a quarter of the squared distance to its nearest other
        // colour: a colour nearer than that to its old nearest has it still
        // (triangle inequality: any other is farther), with no search.
        var assigned = [UInt8](repeating: 0, count: total)
        var reach = [Int32](repeating: -1, count: opaque.count)
        for round in 0..<rounds {
            let rgb = opaque.flatMap { [colors[$0].r, colors[$0].g, colors[$0].b] }
            if round > 0 {
                for j in opaque.indices {
                    var least = Int32.max
                    for k in opaque.indices where k != j {
                        let dr = Int32(rgb[j * 3]) - Int32(rgb[k * 3]), dg = Int32(rgb[j * 3 + 1]) - Int32(rgb[k * 3 + 1])
                        let db = Int32(rgb[j * 3 + 2]) - Int32(rgb[k * 3 + 2])
                        least = min(least, dr * dr + dg * dg + db * db)
                    }
                    reach[j] = least   // compared with 4 × the squared distance
                }
            }
            // Each chunk writes only its own sums and assignments, and
            // `parallel` returns after every chunk: the buffers are
            // shared unsynchronised.
            helperCPU += sums.withUnsafeMutableBufferPointer { all in
                nonisolated(unsafe) let base = all.baseAddress!
                return assigned.withUnsafeMutableBufferPointer { a in
                    nonisolated(unsafe) let assigned = a
                    return reach.withUnsafeBufferPointer { q in
                        nonisolated(unsafe) let reach = q
                        return rgb.withUnsafeBufferPointer { p in
                            nonisolated(unsafe) let palette = p
                            return distinct.keys.withUnsafeBufferPointer { k in
                                nonisolated(unsafe) let keys = k
                                return distinct.counts.withUnsafeBufferPointer { n in
                                    nonisolated(unsafe) let counts = n
                                    return GIFPalette.parallel(chunks) { c in
                                        // The nearest-colour grid fills itself lazily: one per thread.
                                        let nearest = GIFNearestColor(rgb: rgb, cellBits: 4)
                                        let s = base + c * width
                                        s.update(repeating: 0, count: width)
                                        for i in (total * c / chunks)..<(total * (c + 1) / chunks) {
                                            let key = keys[i], n = Int(counts[i])
                                            let r = UInt8(truncatingIfNeeded: key >> 16), g = UInt8(truncatingIfNeeded: key >> 8)
                                            let b = UInt8(truncatingIfNeeded: key)
                                            var j = Int(assigned[i])
                                            let dr = Int32(palette[j * 3]) - Int32(r), dg = Int32(palette[j * 3 + 1]) - Int32(g)
                                            let db = Int32(palette[j * 3 + 2]) - Int32(b)
                                            if 4 * (dr * dr + dg * dg + db * db) >= reach[j] {
                                                j = Int(nearest.index(r, g, b))
                                                assigned[i] = UInt8(j)
                                            }
                                            let k = j * 4
                                            s[k] += Int(r) * n; s[k + 1] += Int(g) * n; s[k + 2] += Int(b) * n; s[k + 3] += n
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            for (j, c) in opaque.enumerated() {
                var t = (0, 0, 0, 0)
                for chunk in 0..<chunks {
                    let k = chunk * width + j * 4
                    t.0 += sums[k]; t.1 += sums[k + 1]; t.2 += sums[k + 2]; t.3 += sums[k + 3]
                }
                let n = t.3
                guard n > 0 else { continue }
                func mean(_ v: Int) -> UInt8 { UInt8((v + n / 2) / n) }
                colors[c] = liq_color(r: mean(t.0), g: mean(t.1), b: mean(t.2), a: 255)
            }
        }
        return helperCPU
    }

    /// The distinct colours of the opaque pixels of an RGBA image (alpha
    /// 0 is transparent), ascending as `r << 16 | g << 8 | b`, and how many
    /// pixels have each: a radix sort of the pixels' colours.
    struct Distinct {
        var keys: [UInt32] = []
        var counts: [UInt32] = []

        init() {}

        /// The opaque entries of `histogram` (each a cube's mean colour
        /// with its pixel count), ascending as the pixels' colours are:
        /// sums over them are those of the pixels give or take each cube's
        /// rounding, for a fifth of the work. (The cubes are disjoint, so
        /// their means are distinct colours.)
        init(_ histogram: Histogram) {
            var packed = histogram.entries.compactMap { e in
                e.color.a >= 128 ? UInt64(e.color.r) << 48 | UInt64(e.color.g) << 40 | UInt64(e.color.b) << 32 | UInt64(e.count) : nil
            }
            packed.sort()
            keys = packed.map { UInt32(truncatingIfNeeded: $0 >> 32) }
            counts = packed.map { UInt32(truncatingIfNeeded: $0) }
        }

        init(_ p: UnsafeRawBufferPointer) {
            var a: [UInt32] = []
            a.reserveCapacity(p.count / 4)
            var i = 0
            while i + 3 < p.count {
                if p[i + 3] != 0 { a.append(UInt32(p[i]) << 16 | UInt32(p[i + 1]) << 8 | UInt32(p[i + 2])) }
                i += 4
            }
            guard !a.isEmpty else { return }
            var b = [UInt32](repeating: 0, count: a.count)
            a.withUnsafeMutableBufferPointer { pa in
                b.withUnsafeMutableBufferPointer { pb in
                    var src = pa, dst = pb
                    for shift in stride(from: UInt32(0), to: 24, by: 8) {
                        var start = [Int](repeating: 0, count: 257)
                        for v in src { start[Int(v >> shift & 255) + 1] += 1 }
                        for d in 1...256 { start[d] += start[d - 1] }
                        for v in src {
                            let d = Int(v >> shift & 255)
                            dst[start[d]] = v
                            start[d] += 1
                        }
                        swap(&src, &dst)
                    }
                }
            }
            // Three passes: the sorted colours are in `b`.
            var last = b[0], run: UInt32 = 0
            for v in b {
                if v != last {
                    keys.append(last); counts.append(run)
                    last = v; run = 0
                }
                run += 1
            }
            keys.append(last); counts.append(run)
        }
    }

    /// What the quantiser is given instead of the pixels: the opaque colours
    /// gathered in cubes of 4×4×4 RGB values (6 bits a channel), each entry
    /// the mean colour of its pixels and their count; a cube holding more
    /// than `denseShare` of the pixels is split into its eight 2×2×2 cubes
    /// (7 bits a channel), where a coarse mean would blur many pixels. Plus
    /// one transparent entry for the pixels with alpha < 128.
    ///
    /// Measured on a 480×360 photo (libimagequant 2.17, speed 2, one
    /// thread, CPU time; the still remapped with dithering, PSNR against
    /// it): every distinct colour (68,323 entries, what
    /// `liq_histogram_add_image` makes) 40.52 dB in 373 ms, 300 of them in
    /// the quantiser; 6 bits (6,885 entries) 40.23 dB in 123 ms; 7 bits
    /// (23,994) 40.46 dB in 247 ms; these cubes (15,231 entries) with three
    /// rounds of `refine` 40.52 dB (GIF 0.4% larger).
    struct Histogram {
        static let denseShare = 1.0 / 6912
        var entries: [liq_histogram_entry] = []
        var transparentPixels = 0

        /// Gathers `pixels` (RGBA) and makes their alpha binary on the way:
        /// alpha < 128 becomes a transparent black pixel, any other 255.
        init(binarizing pixels: inout [UInt8], denseShare: Double = Histogram.denseShare) {
            // The pixels are written only where an alpha is not 255 (a
            // photo's are all 255: no copy of a shared array, and its pages
            // are not touched twice).
            let binary = pixels.withUnsafeBufferPointer { p in
                var all: UInt8 = 255
                for i in stride(from: 3, to: p.count, by: 4) { all &= p[i] }
                return all == 255
            }
            if !binary {
                pixels.withUnsafeMutableBufferPointer { p in
                    for i in stride(from: 0, to: p.count - 3, by: 4) {
                        if p[i + 3] < 128 {
                            p[i] = 0; p[i + 1] = 0; p[i + 2] = 0; p[i + 3] = 0
                        } else {
                            p[i + 3] = 255
                        }
                    }
                }
            }
            // Per coarse cube: its slot in the sums (-1: empty), slots in
            // the order the cubes first appear, and per slot the sums of
            // r, g, b and the count, gathered in the same pass.
            var slot = [Int32](repeating: -1, count: 1 << 18)
            var slots = 0
            var transparent = 0
            let pixelCount = pixels.count / 4
            // At most one slot a pixel or a cube: memory that is touched
            // only as far as slots are used.
            let sumsCapacity = 4 * max(1, min(pixelCount, 1 << 18))
            let sumsBuffer = UnsafeMutablePointer<Int>.allocate(capacity: sumsCapacity)
            defer { sumsBuffer.deallocate() }
            pixels.withUnsafeBufferPointer { p in
                slot.withUnsafeMutableBufferPointer { slot in
                    for j in 0..<pixelCount {
                        let i = j * 4
                        if p[i + 3] == 0 {
                            transparent += 1
                            continue
                        }
                        let k = Int(p[i] >> 2) << 12 | Int(p[i + 1] >> 2) << 6 | Int(p[i + 2] >> 2)
                        var s = Int(slot[k])
                        if s < 0 {
                            s = slots
                            slot[k] = Int32(s)
                            slots += 1
                            (sumsBuffer + s * 4).initialize(repeating: 0, count: 4)
                        }
                        let t = sumsBuffer + s * 4
                        t[0] &+= Int(p[i]); t[1] &+= Int(p[i + 1]); t[2] &+= Int(p[i + 2]); t[3] &+= 1
                    }
                }
            }
            let sums = Array(UnsafeBufferPointer(start: sumsBuffer, count: slots * 4))
            let opaque = pixels.count / 4 - transparent
            let dense = max(16, Int(Double(opaque) * denseShare))
            // The dense cubes' eight sub-cubes: per dense slot, 8 × (r, g, b, count).
            var fineBase = [Int32](repeating: -1, count: slots)
            var fineCount = 0
            for s in 0..<slots where sums[s * 4 + 3] >= dense {
                fineBase[s] = Int32(fineCount)
                fineCount += 32
            }
            var fine = [Int](repeating: 0, count: fineCount)
            if fineCount > 0 {
                pixels.withUnsafeBufferPointer { p in
                    slot.withUnsafeBufferPointer { slot in
                        fineBase.withUnsafeBufferPointer { fineBase in
                            fine.withUnsafeMutableBufferPointer { fine in
                                for j in 0..<pixelCount where p[j * 4 + 3] != 0 {
                                    let i = j * 4
                                    let k = Int(p[i] >> 2) << 12 | Int(p[i + 1] >> 2) << 6 | Int(p[i + 2] >> 2)
                                    let base = Int(fineBase[Int(slot[k])])
                                    guard base >= 0 else { continue }
                                    let sub = base + (Int(p[i] >> 1 & 1) << 2 | Int(p[i + 1] >> 1 & 1) << 1 | Int(p[i + 2] >> 1 & 1)) * 4
                                    fine[sub] += Int(p[i]); fine[sub + 1] += Int(p[i + 1])
                                    fine[sub + 2] += Int(p[i + 2]); fine[sub + 3] += 1
                                }
                            }
                        }
                    }
                }
            }
            func entry(_ a: [Int], _ j: Int) -> liq_histogram_entry? {
                let n = a[j + 3]
                guard n > 0 else { return nil }
                func mean(_ v: Int) -> UInt8 { UInt8((v + n / 2) / n) }
                return liq_histogram_entry(color: liq_color(r: mean(a[j]), g: mean(a[j + 1]), b: mean(a[j + 2]), a: 255),
                                           count: UInt32(clamping: n))
            }
            entries.reserveCapacity(sums.count / 4 + fine.count / 4)
            for s in 0..<(sums.count / 4) where fineBase[s] < 0 {
                if let e = entry(sums, s * 4) { entries.append(e) }
            }
            for j in stride(from: 0, to: fine.count, by: 4) {
                if let e = entry(fine, j) { entries.append(e) }
            }
            if transparent > 0 {
                entries.append(liq_histogram_entry(color: liq_color(r: 0, g: 0, b: 0, a: 0), count: UInt32(clamping: transparent)))
            }
            transparentPixels = transparent
        }

        /// Every distinct opaque colour of `pixels` (alpha already binary)
        /// an entry of its own, and the transparent one as before.
        mutating func useDistinctColours(_ pixels: [UInt8]) {
            let distinct = pixels.withUnsafeBytes { Distinct($0) }
            entries = zip(distinct.keys, distinct.counts).map { key, count in
                liq_histogram_entry(color: liq_color(r: UInt8(key >> 16 & 255), g: UInt8(key >> 8 & 255), b: UInt8(key & 255), a: 255),
                                    count: count)
            }
            if transparentPixels > 0 {
                entries.append(liq_histogram_entry(color: liq_color(r: 0, g: 0, b: 0, a: 0), count: UInt32(clamping: transparentPixels)))
            }
        }
    }
}

/// Exact nearest palette colour (squared RGB distance, lowest index on a
/// tie) through a lazily filled grid of cells (32×32×32, or 16×16×16 with
/// `cellBits` 4: fewer cells to build, for a palette used for one pass),
/// each holding the palette entries that can be nearest to some colour
/// inside the cell (locally sorted search, Heckbert 1982). Deterministic
/// and fast: a few candidates per lookup. Its tables are plain memory it
/// owns (no array checks in the lookup, which runs for every changed pixel
/// of every frame).
final class GIFNearestColor {
    private let n: Int
    private let bits: Int, shift: UInt8, cells: Int
    private let pr: UnsafeMutablePointer<Int32>, pg: UnsafeMutablePointer<Int32>, pb: UnsafeMutablePointer<Int32>
    /// Per cell: start of its list in `candidates`, or -1 (not built yet).
    private let cellStart: UnsafeMutablePointer<Int32>
    private let cellCount: UnsafeMutablePointer<UInt16>
    /// The cells' lists, back to back: room for every cell to list every
    /// colour (only the pages used are touched).
    private let candidates: UnsafeMutablePointer<UInt8>
    private var used = 0
    /// Scratch of `build`: each colour's least distance to the cell.
    private let minD: UnsafeMutablePointer<Int32>
    /// The same lists for cells 4×4×4 times larger (`bits - 2` a channel),
    /// built lazily too: a cell's list is a subset of its coarse cell's
    /// (a colour farther from the coarse cell than some colour's farthest
    /// point is farther from every point inside it), so a cell is built
    /// from its coarse cell's few colours instead of all of them, to the
    /// same list in the same order.
    private let coarseBits: Int, coarseStart: UnsafeMutablePointer<Int32>, coarseCount: UnsafeMutablePointer<UInt16>
    private let coarseCandidates: UnsafeMutablePointer<UInt8>
    private var coarseUsed = 0
    /// Per colour: a quarter of the squared distance to its nearest other
    /// colour. A point nearer (squared) to a colour than this is nearer to
    /// it than to any other (the triangle inequality), so `index(_:_:_:guess:)`
    /// answers without a search.
    private let sure: UnsafeMutablePointer<Int32>

    init(rgb: [UInt8], cellBits: Int = 5) {
        n = max(1, rgb.count / 3)
        bits = cellBits
        shift = UInt8(8 - cellBits)
        cells = 1 << (3 * cellBits)
        pr = .allocate(capacity: n); pg = .allocate(capacity: n); pb = .allocate(capacity: n)
        for i in 0..<n {
            pr[i] = i * 3 + 2 < rgb.count ? Int32(rgb[i * 3]) : 0
            pg[i] = i * 3 + 2 < rgb.count ? Int32(rgb[i * 3 + 1]) : 0
            pb[i] = i * 3 + 2 < rgb.count ? Int32(rgb[i * 3 + 2]) : 0
        }
        cellStart = .allocate(capacity: cells)
        cellStart.initialize(repeating: -1, count: cells)
        cellCount = .allocate(capacity: cells)
        cellCount.initialize(repeating: 0, count: cells)
        candidates = .allocate(capacity: cells * n)
        minD = .allocate(capacity: n)
        coarseBits = max(0, cellBits - 2)
        let coarseCells = 1 << (3 * coarseBits)
        coarseStart = .allocate(capacity: coarseCells)
        coarseStart.initialize(repeating: -1, count: coarseCells)
        coarseCount = .allocate(capacity: coarseCells)
        coarseCount.initialize(repeating: 0, count: coarseCells)
        coarseCandidates = .allocate(capacity: coarseCells * n)
        sure = .allocate(capacity: n)
        sure.initialize(repeating: Int32.max, count: n)
        for i in 0..<n {
            for j in (i + 1)..<max(i + 1, n) {
                let dr = pr[i] - pr[j], dg = pg[i] - pg[j], db = pb[i] - pb[j]
                let quarter = (dr * dr + dg * dg + db * db) / 4
                sure[i] = min(sure[i], quarter)
                sure[j] = min(sure[j], quarter)
            }
        }
    }

    deinit {
        pr.deallocate(); pg.deallocate(); pb.deallocate()
        cellStart.deallocate(); cellCount.deallocate(); candidates.deallocate(); minD.deallocate()
        coarseStart.deallocate(); coarseCount.deallocate(); coarseCandidates.deallocate()
        sure.deallocate()
    }

    /// The palette index nearest to `(r, g, b)` (the same as `index`),
    /// looked for first at `guess` (a neighbour's colour, the pixel's
    /// undithered colour): where the point is well inside that colour's
    /// reach there is no search.
    @inline(__always)
    func index(_ r: UInt8, _ g: UInt8, _ b: UInt8, guess: UInt8) -> UInt8 {
        let k = Int(guess)
        if k < n {
            let dr = pr[k] &- Int32(r), dg = pg[k] &- Int32(g), db = pb[k] &- Int32(b)
            // Strictly inside: no other colour is as near (a tie would go to
            // the lower index).
            if dr &* dr &+ dg &* dg &+ db &* db < sure[k] { return guess }
        }
        return index(r, g, b)
    }

    /// The palette index nearest to `(r, g, b)`.
    @inline(__always)
    func index(_ r: UInt8, _ g: UInt8, _ b: UInt8) -> UInt8 {
        let cell = Int(r >> shift) << (2 * bits) | Int(g >> shift) << bits | Int(b >> shift)
        var start = Int(cellStart[cell])
        if start < 0 { start = build(cell) }
        let count = Int(cellCount[cell])
        if count == 1 { return candidates[start] }
        let r = Int32(r), g = Int32(g), b = Int32(b)
        var best: UInt8 = 0
        var bestD = Int32.max
        for k in start..<(start + count) {
            let i = Int(candidates[k])
            let dr = pr[i] &- r, dg = pg[i] &- g, db = pb[i] &- b
            let d = dr &* dr &+ dg &* dg &+ db &* db
            if d < bestD { bestD = d; best = candidates[k] }
        }
        return best
    }

    private func build(_ cell: Int) -> Int {
        let mask = (1 << bits) - 1
        let (x, y, z) = (cell >> (2 * bits), (cell >> bits) & mask, cell & mask)
        // The coarse cell's list first (from every colour), then this
        // cell's from it.
        let drop = bits - coarseBits, coarseMask = (1 << coarseBits) - 1
        let coarse = (x >> drop) << (2 * coarseBits) | ((y >> drop) & coarseMask) << coarseBits | ((z >> drop) & coarseMask)
        if coarseStart[coarse] < 0 {
            let start = coarseUsed
            coarseUsed += select(x >> drop, y >> drop, z >> drop, shift: 8 - coarseBits, from: nil, count: n,
                                 into: coarseCandidates + start)
            coarseStart[coarse] = Int32(start)
            coarseCount[coarse] = UInt16(coarseUsed - start)
        }
        let start = used
        used += select(x, y, z, shift: Int(shift), from: coarseCandidates + Int(coarseStart[coarse]),
                       count: Int(coarseCount[coarse]), into: candidates + start)
        cellStart[cell] = Int32(start)
        cellCount[cell] = UInt16(used - start)
        return start
    }

    /// Writes to `out` the colours (of `from`'s `count` indices, ascending,
    /// or of all when nil) that can be nearest to some point of the cell
    /// (x, y, z) of side `1 << shift`; returns how many.
    private func select(_ x: Int, _ y: Int, _ z: Int, shift: Int, from: UnsafeMutablePointer<UInt8>?, count: Int,
                        into out: UnsafeMutablePointer<UInt8>) -> Int {
        let s = Int32(shift)
        let lx = Int32(x) << s, ly = Int32(y) << s, lz = Int32(z) << s
        let side = (Int32(1) << s) - 1
        let hx = lx + side, hy = ly + side, hz = lz + side
        // Per axis, the least and the most squared distance from the colour
        // to the cell's range [l, h]: max(l - p, p - h, 0) and
        // max(p - l, h - p) (branch-free, wrapping: every value is a colour within 0...255,
        // and this loop is most of a grid's cost).
        @inline(__always) func distances(_ i: Int) -> (min: Int32, max: Int32) {
            let r = pr[i], g = pg[i], b = pb[i]
            let nr = max(0, max(lx &- r, r &- hx)), ng = max(0, max(ly &- g, g &- hy)), nb = max(0, max(lz &- b, b &- hz))
            let fr = max(r &- lx, hx &- r), fg = max(g &- ly, hy &- g), fb = max(b &- lz, hz &- b)
            return (nr &* nr &+ ng &* ng &+ nb &* nb, fr &* fr &+ fg &* fg &+ fb &* fb)
        }
        var bound = Int32.max
        if let from {
            for k in 0..<count {
                let d = distances(Int(from[k]))
                minD[k] = d.min
                bound = min(bound, d.max)
            }
        } else {
            for k in 0..<count {
                let d = distances(k)
                minD[k] = d.min
                bound = min(bound, d.max)
            }
        }
        var m = 0
        if let from {
            for k in 0..<count where minD[k] <= bound {
                out[m] = from[k]
                m += 1
            }
        } else {
            for k in 0..<count where minD[k] <= bound {
                out[m] = UInt8(truncatingIfNeeded: k)
                m += 1
            }
        }
        return m
    }
}
