import WobbleCore
@testable import WobbleMedia
import XCTest

/// The still's dithered remap (`GIFDither`) and the nearest-colour search
/// it leans on.
final class GIFDitherTests: XCTestCase {
    /// A palette's nearest colour found from a guess is the colour the full
    /// search finds (and a brute-force search over every colour, lowest
    /// index on a tie), whatever the guess: a photo-like palette of close
    /// colours with a duplicate among them.
    func testTheGuessedSearchFindsTheNearestColour() {
        var state: UInt32 = 99
        func next() -> UInt8 {
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 24)
        }
        var rgb: [UInt8] = []
        for k in 0..<200 { rgb += [UInt8(60 + k / 2), next() / 4 + 100, UInt8(k)] }
        rgb += Array(rgb[30..<33])   // a duplicate of colour 10
        for _ in 0..<54 { rgb += [next(), next(), next()] }
        let n = rgb.count / 3
        XCTAssertEqual(n, 255)
        let nearest = GIFNearestColor(rgb: rgb)
        var shortcuts = 0
        for _ in 0..<30_000 {
            let r = next(), g = next() / 4 + 100, b = next()
            var best = 0, bestD = Int.max
            for k in 0..<n {
                let dr = Int(rgb[k * 3]) - Int(r), dg = Int(rgb[k * 3 + 1]) - Int(g), db = Int(rgb[k * 3 + 2]) - Int(b)
                let d = dr * dr + dg * dg + db * db
                if d < bestD { bestD = d; best = k }
            }
            XCTAssertEqual(Int(nearest.index(r, g, b)), best)
            // The right answer as the guess, and a random one.
            for guess in [UInt8(best), next()] {
                let found = nearest.index(r, g, b, guess: guess)
                XCTAssertEqual(Int(found), best, "(\(r), \(g), \(b)) guessing \(guess)")
                if found == guess { shortcuts += 1 }
            }
        }
        XCTAssertGreaterThan(shortcuts, 30_000, "the right guess is taken")
        // The duplicate (index 200) is never the answer: colour 10 comes first.
        XCTAssertEqual(nearest.index(rgb[30], rgb[31], rgb[32], guess: 200), 10)
    }

    /// A picture in four parts, 16 colours to map to: a smooth ramp (the
    /// palette's steps 17 apart), a flat area exactly on a palette colour,
    /// noise and a hard edge.
    private func parts(width w: Int = 160, height h: Int = 120) -> (pixels: [UInt8], rgb: [UInt8]) {
        var px = [UInt8](repeating: 255, count: w * h * 4)
        var state: UInt32 = 5
        for y in 0..<h {
            for x in 0..<w {
                let i = (y * w + x) * 4
                state = state &* 1_664_525 &+ 1_013_904_223
                let v: UInt8
                switch (x < w / 2, y < h / 2) {
                case (true, true): v = UInt8(x * 255 / (w / 2 - 1))             // the ramp
                case (false, true): v = 85                                       // flat, on a colour
                case (true, false): v = UInt8(truncatingIfNeeded: state >> 24)  // noise
                case (false, false): v = (x / 8) % 2 == 0 ? 30 : 220            // edges every 8 px
                }
                px[i] = v; px[i + 1] = v; px[i + 2] = v
            }
        }
        var rgb: [UInt8] = []
        for k in 0..<16 { rgb += [UInt8(k * 17), UInt8(k * 17), UInt8(k * 17)] }
        return (px, rgb)
    }

    /// The ramp is dithered: its 4×4 block means follow the ramp far better
    /// than the nearest colours' do, over many colours; the flat area on a
    /// palette colour gets that colour alone (no grain); the noise is
    /// dithered far less than the ramp (fewer pixels away from their
    /// nearest colour), the pixels beside an edge not at all.
    func testTheRampIsDitheredTheFlatAreaAndTheNoiseAreNot() throws {
        let w = 160, h = 120
        let (px, rgb) = parts(width: w, height: h)
        let edges = try XCTUnwrap(px.withUnsafeBytes { GIFDither.edgeMap($0, width: w, height: h) })
        let dither = GIFDither(rgb: rgb, transparent: 16, edges: edges)
        let nearest = GIFNearestColor(rgb: rgb)
        let out = px.withUnsafeBytes { dither.remap($0, width: w, height: h, rows: 0, h, dithering: 1) }
        XCTAssertEqual(out.count, w * h)
        func part(_ left: Bool, _ top: Bool) -> [(Int, Int)] {
            // Inside the part, 4 px from its sides (the map spreads a little).
            let xs = left ? 4..<(w / 2 - 4) : (w / 2 + 4)..<(w - 4), ys = top ? 4..<(h / 2 - 4) : (h / 2 + 4)..<(h - 4)
            return ys.flatMap { y in xs.map { x in (x, y) } }
        }
        func away(_ cells: [(Int, Int)]) -> Double {
            let moved = cells.filter { x, y in
                let i = y * w + x
                return out[i] != nearest.index(px[i * 4], px[i * 4 + 1], px[i * 4 + 2])
            }
            return Double(moved.count) / Double(cells.count)
        }
        // The ramp: block means.
        func blockError(_ indices: (Int) -> UInt8) -> Double {
            var total = 0.0, count = 0
            for by in stride(from: 4, to: h / 2 - 8, by: 4) {
                for bx in stride(from: 4, to: w / 2 - 8, by: 4) {
                    var shown = 0.0, truth = 0.0
                    for y in by..<(by + 4) {
                        for x in bx..<(bx + 4) {
                            shown += Double(rgb[Int(indices(y * w + x)) * 3])
                            truth += Double(px[(y * w + x) * 4])
                        }
                    }
                    total += abs(shown - truth) / 16
                    count += 1
                }
            }
            return total / Double(count)
        }
        let dithered = blockError { out[$0] }
        let plain = blockError { nearest.index(px[$0 * 4], px[$0 * 4 + 1], px[$0 * 4 + 2]) }
        XCTAssertLessThan(dithered, plain / 2, "the ramp's local means: dithered \(dithered), nearest \(plain)")
        XCTAssertGreaterThanOrEqual(Set(part(true, true).map { out[$0.1 * w + $0.0] }).count, 14)
        XCTAssertEqual(Set(part(false, true).map { out[$0.1 * w + $0.0] }), [5], "the flat area: colour 5 (85) alone")
        let ramp = away(part(true, true)), noise = away(part(true, false))
        XCTAssertGreaterThan(ramp, 0.1, "the ramp is dithered: \(ramp)")
        XCTAssertLessThan(noise, ramp / 2, "noise \(noise) against the ramp \(ramp)")
        // The stripes (30 and 220: 4 and 1 off the palette's 34 and 221)
        // are dithered inside, not at their edges.
        let sides = away(part(false, false).filter { $0.0 % 8 == 0 || $0.0 % 8 == 7 })
        let inside = away(part(false, false).filter { $0.0 % 8 == 3 || $0.0 % 8 == 4 })
        XCTAssertEqual(sides, 0, "the pixels on each side of an edge keep their nearest colour")
        XCTAssertGreaterThan(inside, 0.05, "inside the stripes: \(inside)")
    }

    /// The edge map: 255 on flat areas, low on an edge and in noise.
    func testTheEdgeMapFindsFlatAreasEdgesAndNoise() throws {
        let w = 160, h = 120
        let (px, _) = parts(width: w, height: h)
        let map = try XCTUnwrap(px.withUnsafeBytes { GIFDither.edgeMap($0, width: w, height: h) })
        XCTAssertEqual(map.count, w * h)
        XCTAssertEqual(map[30 * w + 120], 255, "flat")
        XCTAssertGreaterThan(map[30 * w + 40], 200, "the ramp is smooth")
        XCTAssertLessThan(map[90 * w + 40], 60, "noise")
        XCTAssertLessThanOrEqual(map[90 * w + 87], 60, "beside an edge (x = 88)")
        XCTAssertLessThanOrEqual(map[90 * w + 88], 60, "beside an edge (x = 88)")
        XCTAssertEqual(map[90 * w + 92], 255, "inside a stripe")
        // The working values come back to the same byte.
        for c in 0..<256 {
            let v = GIFDither.working[c]
            XCTAssertEqual(Int(GIFDither.inverse[Int(v * (4095 / 255) + 0.5)]), c)
        }
        XCTAssertNil([UInt8](repeating: 9, count: 3 * 9 * 4).withUnsafeBytes { GIFDither.edgeMap($0, width: 3, height: 9) },
                     "under 4×4: no map (dithered everywhere)")
    }

    /// Bands remapped on two threads are the bytes of the same bands
    /// remapped one after the other; transparent pixels take the reserved
    /// index and the rows below them are still dithered.
    func testBandsGiveTheSameBytesOnThreadsAndTransparentPixelsTheReservedIndex() throws {
        let w = 160, h = 120
        var (px, rgb) = parts(width: w, height: h)
        for y in 0..<h where y % 9 == 4 { for x in 0..<w where x % 5 == 0 { px[(y * w + x) * 4 + 3] = 0 } }
        let edges = px.withUnsafeBytes { GIFDither.edgeMap($0, width: w, height: h) }
        let dither = GIFDither(rgb: rgb, transparent: 16, edges: edges)
        let one = px.withUnsafeBytes { buf in
            [dither.remap(buf, width: w, height: h, rows: 0, 61, dithering: 1),
             dither.remap(buf, width: w, height: h, rows: 61, h, dithering: 1)]
        }
        let slots = ResultSlots<[UInt8]>(2, initial: [])
        px.withUnsafeBytes { buf in
            nonisolated(unsafe) let pixels = buf
            _ = GIFPalette.parallel(2) { c in
                slots.set(c, dither.remap(pixels, width: w, height: h, rows: c == 0 ? 0 : 61, c == 0 ? 61 : h, dithering: 1))
            }
        }
        XCTAssertEqual(slots.get(0), one[0])
        XCTAssertEqual(slots.get(1), one[1])
        let all = one[0] + one[1]
        for i in 0..<(w * h) {
            XCTAssertEqual(all[i] == 16, px[i * 4 + 3] == 0, "pixel \(i)")
        }
        // Dithering 0: every opaque pixel its nearest colour.
        let nearest = GIFNearestColor(rgb: rgb)
        let plain = px.withUnsafeBytes { dither.remap($0, width: w, height: h, rows: 0, h, dithering: 0) }
        for i in 0..<(w * h) where px[i * 4 + 3] != 0 {
            XCTAssertEqual(plain[i], nearest.index(px[i * 4], px[i * 4 + 1], px[i * 4 + 2]), "pixel \(i)")
        }
    }
}
