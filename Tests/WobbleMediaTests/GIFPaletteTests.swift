import CImageQuant
import WobbleCore
@testable import WobbleMedia
import XCTest

/// The palette's mechanisms against plain reference versions: the k-means
/// refinement on distinct colours split over threads; a still of few
/// colours kept exactly. (The still's remap: `GIFDitherTests`.)
final class GIFPaletteTests: XCTestCase {
    /// A 160×120 picture of mostly distinct colours (a linear congruential
    /// sequence), every 5th pixel repeating an earlier one, every 37th
    /// transparent; alpha binary as `refine` expects.
    private func noisyPixels() -> [UInt8] {
        var state: UInt32 = 12345
        func next() -> UInt8 {
            state = state &* 1_103_515_245 &+ 12345
            return UInt8(truncatingIfNeeded: state >> 16)
        }
        let n = 160 * 120
        var p = [UInt8](repeating: 0, count: n * 4)
        for i in 0..<n {
            if i % 37 == 36 { continue }   // transparent black
            if i % 5 == 4 {
                let j = i / 2
                p[i * 4] = p[j * 4]; p[i * 4 + 1] = p[j * 4 + 1]; p[i * 4 + 2] = p[j * 4 + 2]; p[i * 4 + 3] = p[j * 4 + 3]
                if p[i * 4 + 3] == 0 { p[i * 4 + 3] = 255 }
                continue
            }
            p[i * 4] = next(); p[i * 4 + 1] = next() / 2 &+ 64; p[i * 4 + 2] = next(); p[i * 4 + 3] = 255
        }
        return p
    }

    /// Lloyd's k-means over every opaque pixel with a brute-force nearest
    /// colour (lowest index on a tie): what `refine` must equal.
    private func referenceRefine(_ colors: [liq_color], pixels: [UInt8], rounds: Int) -> [liq_color] {
        var colors = colors
        let opaque = colors.indices.filter { colors[$0].a >= 128 }
        for _ in 0..<rounds {
            var sums = [Int](repeating: 0, count: opaque.count * 4)
            for i in stride(from: 0, to: pixels.count, by: 4) where pixels[i + 3] != 0 {
                var best = 0, bestD = Int.max
                for (j, c) in opaque.enumerated() {
                    let dr = Int(colors[c].r) - Int(pixels[i]), dg = Int(colors[c].g) - Int(pixels[i + 1])
                    let db = Int(colors[c].b) - Int(pixels[i + 2])
                    let d = dr * dr + dg * dg + db * db
                    if d < bestD { bestD = d; best = j }
                }
                sums[best * 4] += Int(pixels[i]); sums[best * 4 + 1] += Int(pixels[i + 1])
                sums[best * 4 + 2] += Int(pixels[i + 2]); sums[best * 4 + 3] += 1
            }
            for (j, c) in opaque.enumerated() {
                let n = sums[j * 4 + 3]
                guard n > 0 else { continue }
                func mean(_ v: Int) -> UInt8 { UInt8((v + n / 2) / n) }
                colors[c] = liq_color(r: mean(sums[j * 4]), g: mean(sums[j * 4 + 1]), b: mean(sums[j * 4 + 2]), a: 255)
            }
        }
        return colors
    }

    private func startColors() -> [liq_color] {
        var colors: [liq_color] = []
        for k in 0..<24 {
            let r = UInt8(k * 10), g = UInt8(255 - k * 9), b = UInt8((k * 77) % 256)
            colors.append(liq_color(r: r, g: g, b: b, a: 255))
        }
        colors.insert(liq_color(r: 0, g: 0, b: 0, a: 0), at: 5)   // a transparent entry stays
        colors.append(liq_color(r: 250, g: 0, b: 250, a: 255))     // duplicates: ties go to the lower index
        colors.append(liq_color(r: 250, g: 0, b: 250, a: 255))
        return colors
    }

    func testDistinctColoursCountEveryOpaquePixelOnce() {
        let pixels = noisyPixels()
        let distinct = pixels.withUnsafeBytes { GIFPalette.Distinct($0) }
        var expected: [UInt32: UInt32] = [:]
        for i in stride(from: 0, to: pixels.count, by: 4) where pixels[i + 3] != 0 {
            expected[UInt32(pixels[i]) << 16 | UInt32(pixels[i + 1]) << 8 | UInt32(pixels[i + 2]), default: 0] += 1
        }
        XCTAssertEqual(distinct.keys, expected.keys.sorted())
        XCTAssertEqual(distinct.counts, distinct.keys.map { expected[$0] ?? 0 })
        XCTAssertGreaterThan(distinct.keys.count, 3 * 4096, "enough colours for three chunks")
        XCTAssertTrue([UInt8](repeating: 0, count: 64).withUnsafeBytes { GIFPalette.Distinct($0) }.keys.isEmpty)
    }

    /// A one-frame GIF's `refine` sums over the histogram's cubes: every
    /// opaque entry once (the transparent one left out), ascending, each
    /// count as the histogram has it, together every opaque pixel; a
    /// denser share splits fewer cubes (fewer entries).
    func testDistinctFromTheHistogramsCubes() {
        var pixels = noisyPixels()
        for i in stride(from: 3, to: pixels.count, by: 44) { pixels[i] = 90 }   // alpha < 128: transparent
        var clip = pixels, one = pixels
        let histogram = GIFPalette.Histogram(binarizing: &clip)
        let oneFrame = GIFPalette.Histogram(binarizing: &one, denseShare: GIFPalette.OneFrame.denseShare)
        XCTAssertEqual(clip, one, "the same binary alpha")
        XCTAssertEqual(histogram.transparentPixels, oneFrame.transparentPixels)
        let cubes = GIFPalette.Distinct(oneFrame)
        var expected: [UInt32: UInt32] = [:]
        for e in oneFrame.entries where e.color.a >= 128 {
            expected[UInt32(e.color.r) << 16 | UInt32(e.color.g) << 8 | UInt32(e.color.b)] = e.count
        }
        XCTAssertEqual(cubes.keys, expected.keys.sorted())
        XCTAssertEqual(cubes.keys.count, oneFrame.entries.count - 1, "every opaque entry, none twice")
        XCTAssertEqual(cubes.counts, cubes.keys.map { expected[$0] ?? 0 })
        let opaque = stride(from: 3, to: one.count, by: 4).filter { one[$0] == 255 }.count
        XCTAssertEqual(cubes.counts.reduce(0) { $0 + Int($1) }, opaque)
        XCTAssertEqual(oneFrame.transparentPixels, pixels.count / 4 - opaque)
        XCTAssertGreaterThan(oneFrame.transparentPixels, 0)
        // A smooth 480×360 gradient: about 42 pixels a cube, split in a
        // clip's histogram (more than 1/6912 of the pixels), not in a one
        // frame's (1/3000).
        var gradient = [UInt8](repeating: 255, count: 480 * 360 * 4)
        for y in 0..<360 {
            for x in 0..<480 {
                gradient[(y * 480 + x) * 4] = UInt8(x * 255 / 479)
                gradient[(y * 480 + x) * 4 + 1] = UInt8(y * 255 / 359)
                gradient[(y * 480 + x) * 4 + 2] = 128
            }
        }
        var g1 = gradient, g2 = gradient
        let fine = GIFPalette.Histogram(binarizing: &g1).entries.count
        let coarse = GIFPalette.Histogram(binarizing: &g2, denseShare: GIFPalette.OneFrame.denseShare).entries.count
        XCTAssertEqual(coarse, 64 * 64, "one entry a cube")
        XCTAssertEqual(fine, 4 * coarse, "each cube split in four (b is constant)")
    }

    /// The nearest-colour grid (its cells' lists built from coarser
    /// cells' lists) finds exactly what a search of every colour finds,
    /// the lowest index on a tie, at both cell sizes, for palettes of 1 to
    /// 255 colours with duplicates, and for every colour of a coarse grid
    /// of the RGB cube plus random ones.
    func testNearestColourIsTheExhaustiveSearchsAnswer() {
        var state: UInt32 = 99
        func next() -> UInt8 {
            state = state &* 1_103_515_245 &+ 12345
            return UInt8(truncatingIfNeeded: state >> 16)
        }
        for count in [1, 2, 17, 200, 255] {
            var rgb = (0..<(count * 3)).map { _ in next() }
            if count > 2 { rgb[3..<6] = rgb[0..<3] }   // a duplicate: the lower index wins
            func exhaustive(_ r: UInt8, _ g: UInt8, _ b: UInt8) -> UInt8 {
                var best = 0, bestD = Int.max
                for i in 0..<count {
                    let dr = Int(rgb[i * 3]) - Int(r), dg = Int(rgb[i * 3 + 1]) - Int(g), db = Int(rgb[i * 3 + 2]) - Int(b)
                    let d = dr * dr + dg * dg + db * db
                    if d < bestD { bestD = d; best = i }
                }
                return UInt8(best)
            }
            for bits in [4, 5] {
                let grid = GIFNearestColor(rgb: rgb, cellBits: bits)
                var probes: [(UInt8, UInt8, UInt8)] = []
                for r in stride(from: 0, through: 255, by: 15) {
                    for g in stride(from: 0, through: 255, by: 15) {
                        for b in stride(from: 0, through: 255, by: 15) { probes.append((UInt8(r), UInt8(g), UInt8(b))) }
                    }
                }
                for _ in 0..<20_000 { probes.append((next(), next(), next())) }
                for (r, g, b) in probes where grid.index(r, g, b) != exhaustive(r, g, b) {
                    return XCTFail("\(count) colours, \(bits) bits: (\(r), \(g), \(b)) gave \(grid.index(r, g, b)), not \(exhaustive(r, g, b))")
                }
            }
        }
    }

    /// The sums are integers: one chunk, two, three on as many threads all
    /// give the reference's palette exactly.
    func testRefineOnDistinctColoursInChunksEqualsPixelKMeans() {
        let pixels = noisyPixels()
        let start = startColors()
        let expected = referenceRefine(start, pixels: pixels, rounds: 3)
        let distinct = pixels.withUnsafeBytes { GIFPalette.Distinct($0) }
        func bytes(_ c: [liq_color]) -> [UInt8] { c.flatMap { [$0.r, $0.g, $0.b, $0.a] } }
        XCTAssertNotEqual(bytes(expected), bytes(start), "the colours move")
        for chunks in [1, 2, 3] {
            var colors = start
            GIFPalette.refine(&colors, distinct: distinct, rounds: 3, chunks: chunks)
            XCTAssertEqual(bytes(colors), bytes(expected), "\(chunks) chunks")
        }
    }

    /// A still of few colours comes back exactly, in two bands or one,
    /// whatever its shape, as a clip's palette or a one-frame GIF's;
    /// pixels with alpha < 128 get the reserved index.
    func testFewColoursMapExactlyInEveryShape() throws {
        let quadrant: [[UInt8]] = [[200, 30, 30], [30, 200, 30], [30, 30, 200], [240, 240, 10]]
        for (w, h) in [(40, 100), (3, 200), (200, 1), (1, 1), (64, 64), (9, 63)] {
            var pixels = [UInt8](repeating: 0, count: w * h * 4)
            for y in 0..<h {
                for x in 0..<w {
                    let i = (y * w + x) * 4
                    let q = quadrant[(y * 2 / h) * 2 + x * 2 / w]
                    pixels[i] = q[0]; pixels[i + 1] = q[1]; pixels[i + 2] = q[2]
                    pixels[i + 3] = (x + y) % 7 == 3 ? 100 : 255   // alpha 100: transparent in a GIF
                }
            }
            let still = RGBAImage(width: w, height: h, pixels: pixels)
            for oneFrame in [false, true] {
                let palette = try GIFPalette(still: still, speed: 2, oneFrame: oneFrame, dithering: 1, what: "test")
                XCTAssertEqual(palette.stillIndices.count, w * h)
                for i in 0..<(w * h) {
                    let k = Int(palette.stillIndices[i])
                    if pixels[i * 4 + 3] < 128 {
                        XCTAssertEqual(k, Int(palette.transparent), "\(w)x\(h) pixel \(i)")
                    } else {
                        XCTAssertLessThan(k, palette.colorCount, "\(w)x\(h) pixel \(i)")
                        if k < palette.colorCount {
                            XCTAssertEqual(Array(palette.rgb[(k * 3)..<(k * 3 + 3)]), Array(pixels[(i * 4)..<(i * 4 + 3)]), "\(w)x\(h) pixel \(i)")
                        }
                    }
                }
            }
        }
        let clear = RGBAImage(width: 30, height: 70, pixels: [UInt8](repeating: 0, count: 30 * 70 * 4))
        let none = try GIFPalette(still: clear, speed: 2, dithering: 1, what: "test")
        XCTAssertEqual(none.colorCount, 1)
        XCTAssertEqual(Set(none.stillIndices), [none.transparent])
    }

    /// Colours that share one of the histogram's cubes (#FEFEFE beside
    /// #FFFFFF, a grey ramp of 255 levels, pairs one level apart) come back
    /// exactly, as a clip's palette and as one frame's: a still of at most
    /// 255 opaque colours is its own palette. One colour more goes to the
    /// quantiser (at most 255 then).
    func testColoursOfOneCubeStayApart() throws {
        func check(_ name: String, _ w: Int, _ h: Int, _ colour: (Int, Int) -> (UInt8, UInt8, UInt8)) throws {
            var px = [UInt8](repeating: 255, count: w * h * 4)
            for y in 0 ..< h {
                for x in 0 ..< w {
                    let c = colour(x, y), i = (y * w + x) * 4
                    px[i] = c.0; px[i + 1] = c.1; px[i + 2] = c.2
                    if (x + 3 * y) % 11 == 5 { px[i + 3] = 0 }
                }
            }
            for oneFrame in [false, true] {
                let p = try GIFPalette(still: RGBAImage(width: w, height: h, pixels: px), speed: 2, oneFrame: oneFrame,
                                       dithering: 1, what: "test")
                var wrong = 0
                for i in 0 ..< w * h {
                    let k = Int(p.stillIndices[i])
                    if px[i * 4 + 3] == 0 {
                        if k != Int(p.transparent) { wrong += 1 }
                    } else if k >= p.colorCount || Array(p.rgb[(k * 3) ..< (k * 3 + 3)]) != Array(px[(i * 4) ..< (i * 4 + 3)]) {
                        wrong += 1
                    }
                }
                XCTAssertEqual(wrong, 0, "\(name), one frame: \(oneFrame)")
            }
        }
        try check("two whites", 8, 8) { x, _ in x < 4 ? (254, 254, 254) : (255, 255, 255) }
        try check("a ramp of 255 greys", 255, 3) { x, _ in (UInt8(x), UInt8(x), UInt8(x)) }
        try check("pairs a level apart", 8, 4) { x, _ in
            let v = UInt8(50 + x / 2 * 40 + x % 2)
            return (v, v / 2, 255 - v)
        }
        // 256 greys: more than a palette holds, so quantised.
        var ramp = [UInt8](repeating: 255, count: 256 * 2 * 4)
        for i in 0 ..< 512 { ramp[i * 4] = UInt8(i % 256); ramp[i * 4 + 1] = UInt8(i % 256); ramp[i * 4 + 2] = UInt8(i % 256) }
        let quantised = try GIFPalette(still: RGBAImage(width: 256, height: 2, pixels: ramp), speed: 2, dithering: 1, what: "test")
        XCTAssertLessThanOrEqual(quantised.colorCount, 255)
        XCTAssertGreaterThan(quantised.colorCount, 200)
    }
}
