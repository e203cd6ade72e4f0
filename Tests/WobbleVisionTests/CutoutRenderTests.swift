import Foundation
import WobbleCore
@testable import WobbleRender
import WobbleVision
import XCTest

/// Cutout frames on a synthetic picture whose background and
/// object are known: a textured background, a textured disc with a soft
/// (anti-aliased) edge composited over it, the disc's true coverage as the
/// mask.
final class CutoutRenderTests: XCTestCase {
    static let width = 160, height = 120
    static let disc = (x: 80.0, y: 60.0, r: 25.0)

    /// The true background at a pixel.
    static func background(_ x: Int, _ y: Int) -> (Double, Double, Double) {
        (128 + 60 * sin(Double(x) / 7), 100 + 50 * cos(Double(y) / 5), Double((x * 3 + y * 5) % 64) + 80)
    }

    /// The object's colour at a pixel.
    static func objectColour(_ x: Int, _ y: Int) -> (Double, Double, Double) {
        (230, 40 + Double((x + y) % 8) * 12, 60 + Double(x % 5) * 10)
    }

    /// The disc's coverage of a pixel (4×4 samples).
    static func coverage(_ x: Int, _ y: Int) -> Double {
        var n = 0
        for sy in 0..<4 {
            for sx in 0..<4 {
                let px = Double(x) + (Double(sx) + 0.5) / 4, py = Double(y) + (Double(sy) + 0.5) / 4
                let dx = px - disc.x, dy = py - disc.y
                if dx * dx + dy * dy <= disc.r * disc.r { n += 1 }
            }
        }
        return Double(n) / 16
    }

    /// The picture, its true background and the mask.
    static func scene() -> (source: RGBAImage, background: RGBAImage, mask: GreyMask) {
        var src = RGBAImage(width: width, height: height), bg = RGBAImage(width: width, height: height)
        var mask = GreyMask(width: width, height: height)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                let b = background(x, y), o = objectColour(x, y), a = (coverage(x, y) * 255).rounded() / 255
                let bs = [b.0, b.1, b.2], os = [o.0, o.1, o.2]
                for c in 0..<3 {
                    bg.pixels[i + c] = UInt8(bs[c].rounded())
                    src.pixels[i + c] = UInt8((a * os[c] + (1 - a) * Double(bg.pixels[i + c])).rounded())
                }
                src.pixels[i + 3] = 255
                bg.pixels[i + 3] = 255
                mask.pixels[y * width + x] = UInt8((a * 255).rounded())
            }
        }
        return (src, bg, mask)
    }

    /// A moving frame: one region around the disc, swung to `swing`.
    static func frame(_ layer: CutoutLayer?, pin: PinSide? = nil, swing: Double = 1, edges: EdgeMode = .mirror) -> FrameState {
        let shape = SketchPoints(lt: Point(40, 20), rt: Point(120, 20), rb: Point(120, 100), lb: Point(40, 100)).shape
        let peak = shape.maxDisplacement(amplitude: 1, strength: 0.15)
        let region = RegionFrame(shape: shape, peak: peak, direction: Point(0.8, 0.6), swing: swing, pin: pin, cutout: layer)
        return FrameState(index: 1, time: 0.1, regions: [region], edges: edges)
    }

    /// Pixels the displaced object may cover or the object covers at rest,
    /// grown by 2 pixels.
    static func touched(_ frame: FrameState, mask: GreyMask) -> [Bool] {
        let w = width, h = height
        var hit = [Bool](repeating: false, count: w * h)
        for y in 0..<h {
            for x in 0..<w {
                if mask.pixels[y * w + x] != 0 { hit[y * w + x] = true; continue }
                let p = Point(Double(x) + 0.5, Double(y) + 0.5)
                guard let off = frame.regions[0].offset(at: p) else { continue }
                let q = p + off
                let fx = Int((q.x - 0.5).rounded(.down)), fy = Int((q.y - 0.5).rounded(.down))
                for (xx, yy) in [(fx, fy), (fx + 1, fy), (fx, fy + 1), (fx + 1, fy + 1)]
                where xx >= 0 && yy >= 0 && xx < w && yy < h && mask.pixels[yy * w + xx] != 0 {
                    hit[y * w + x] = true
                }
            }
        }
        var grown = hit
        for y in 0..<h {
            for x in 0..<w where hit[y * w + x] {
                for yy in max(0, y - 2)...min(h - 1, y + 2) {
                    for xx in max(0, x - 2)...min(w - 1, x + 2) { grown[yy * w + xx] = true }
                }
            }
        }
        return grown
    }

    /// PSNR in dB of `a` against `b` over the pixels `where` (RGB).
    static func psnr(_ a: RGBAImage, _ b: RGBAImage, where pick: (Int) -> Bool = { _ in true }) -> Double {
        withoutActuallyEscaping(pick) { PSNR.of(a, b, channels: .rgb, where: $0) }
    }

    func testOutsideTheObjectEveryPixelIsTheSourceAndTheObjectMoves() throws {
        let (source, background, mask) = Self.scene()
        let layer = try CutoutVision.layer(image: source, mask: mask)
        let cpu = CPURenderer(source: source)
        for pin in [nil, PinSide.bottom] {
            for swing in [1.0, -0.6] {
                let f = Self.frame(layer, pin: pin, swing: swing)
                let out = try cpu.render(f)
                let touched = Self.touched(f, mask: mask)
                var changedOutside = 0, movedInside = 0
                for k in 0 ..< Self.width * Self.height {
                    let same = out.pixels[k * 4 ..< k * 4 + 4] == source.pixels[k * 4 ..< k * 4 + 4]
                    if !touched[k] && !same { changedOutside += 1 }
                    if mask.pixels[k] == 255 && !same { movedInside += 1 }
                }
                XCTAssertEqual(changedOutside, 0, "pin \(String(describing: pin)) swing \(swing): pixels outside the object changed")
                XCTAssertGreaterThan(movedInside, 300, "pin \(String(describing: pin)) swing \(swing): the object does not move")
                // The background the object uncovers, against the true one.
                let revealed = Self.revealed(f, mask: mask)
                XCTAssertGreaterThan(revealed.filter { $0 }.count, 50)
                let db = Self.psnr(out, background) { revealed[$0] }
                print("cutout: revealed background vs the true background (pin \(pin?.rawValue ?? "none"), swing \(swing)): \(String(format: "%.1f", db)) dB over \(revealed.filter { $0 }.count) pixels")
                XCTAssertGreaterThan(db, 20)
            }
        }
    }

    /// Pixels of the object at rest that the displaced object leaves
    /// entirely (its bilinear footprint there holds no object pixel).
    static func revealed(_ frame: FrameState, mask: GreyMask) -> [Bool] {
        let w = width, h = height
        var out = [Bool](repeating: false, count: w * h)
        for y in 0..<h {
            for x in 0..<w where mask.pixels[y * w + x] != 0 {
                let p = Point(Double(x) + 0.5, Double(y) + 0.5)
                guard let off = frame.regions[0].offset(at: p) else { continue }
                let q = p + off
                let fx = Int((q.x - 0.5).rounded(.down)), fy = Int((q.y - 0.5).rounded(.down))
                var covered = false
                for (xx, yy) in [(fx, fy), (fx + 1, fy), (fx, fy + 1), (fx + 1, fy + 1)]
                where xx >= 0 && yy >= 0 && xx < w && yy < h && mask.pixels[yy * w + xx] != 0 { covered = true }
                out[y * w + x] = !covered
            }
        }
        return out
    }

    func testAtRestTheFrameIsTheSource() throws {
        let (source, _, mask) = Self.scene()
        let layer = try CutoutVision.layer(image: source, mask: mask)
        let cpu = CPURenderer(source: source)
        var f = Self.frame(layer)
        f.regions = []
        XCTAssertEqual(try cpu.render(f), source)
        XCTAssertEqual(try makeGLES(source).render(f), source)
        // The layer itself gives the source back where nothing moves:
        // object + (1 − alpha) · plate.
        var still = source
        source.pixels.withUnsafeBufferPointer { full in
            still.pixels.withUnsafeMutableBufferPointer { dst in
                for y in 0 ..< Self.height {
                    for x in 0 ..< Self.width {
                        let p = Point(Double(x) + 0.5, Double(y) + 0.5)
                        CPURenderer.composite(layer, image: full, p: p, q: p, edges: .mirror, into: dst, at: (y * Self.width + x) * 4)
                    }
                }
            }
        }
        // Exactly, except on the soft edge (where the object's colour was
        // unmixed from an estimated background and may have been clamped).
        for k in 0 ..< Self.width * Self.height where mask.pixels[k] == 0 || mask.pixels[k] == 255 {
            XCTAssertEqual(still.pixels[k * 4 ..< k * 4 + 4], source.pixels[k * 4 ..< k * 4 + 4], "pixel \(k)")
        }
    }

    func testGLESMatchesTheCPUReference() throws {
        let (source, _, mask) = Self.scene()
        let layer = try CutoutVision.layer(image: source, mask: mask)
        let cpu = CPURenderer(source: source)
        let gles = try makeGLES(source)
        for pin in [nil, PinSide.bottom] {
            for edges in [EdgeMode.mirror, .clamp] {
                let f = Self.frame(layer, pin: pin, swing: 0.9, edges: edges)
                let a = try cpu.render(f), b = try gles.render(f)
                let db = Self.psnr(a, b)
                print("cutout: GLES vs CPU (pin \(pin?.rawValue ?? "none"), \(edges)): \(db.isInfinite ? "identical" : String(format: "%.1f dB", db))")
                XCTAssertGreaterThanOrEqual(db, 38)
                // Outside the touched pixels, GLES is exact too.
                let touched = Self.touched(f, mask: mask)
                for k in 0 ..< Self.width * Self.height where !touched[k] {
                    XCTAssertEqual(b.pixels[k * 4 ..< k * 4 + 4], source.pixels[k * 4 ..< k * 4 + 4], "GLES pixel \(k)")
                }
            }
        }
    }

    /// The CPU backend (static profiles) draws cutouts as the reference
    /// does: ≥ 50 dB, and exactly the source outside the touched pixels.
    func testTheCPUBackendMatchesTheCPUReference() throws {
        let (source, _, mask) = Self.scene()
        let layer = try CutoutVision.layer(image: source, mask: mask)
        let cpu = CPURenderer(source: source)
        let fast = FastCPURenderer(source: source)
        for pin in [nil, PinSide.bottom] {
            for edges in [EdgeMode.mirror, .clamp] {
                let f = Self.frame(layer, pin: pin, swing: 0.9, edges: edges)
                let a = try cpu.render(f), b = try fast.render(f)
                XCTAssertNotEqual(a, source)
                let db = Self.psnr(a, b)
                print("cutout: CPU backend vs reference (pin \(pin?.rawValue ?? "none"), \(edges)): \(db.isInfinite ? "identical" : String(format: "%.1f dB", db))")
                XCTAssertGreaterThanOrEqual(db, 50)
                let touched = Self.touched(f, mask: mask)
                for k in 0 ..< Self.width * Self.height where !touched[k] {
                    XCTAssertEqual(b.pixels[k * 4 ..< k * 4 + 4], source.pixels[k * 4 ..< k * 4 + 4], "CPU backend pixel \(k)")
                }
            }
        }
    }

    /// The CPU backend's cutout rows (eight pixels at a time, positions in
    /// single precision) give the per-pixel compositing's values, within a
    /// level: across the layer's box and beyond it (the image's own pixels
    /// as the plate, the object 0 outside its box), pixels with no offset
    /// left as they were, a row whose length is not a multiple of eight,
    /// samples outside the image (mirrored there, as `composite` does).
    func testACutoutRowGivesThePerPixelCompositingsValues() throws {
        let (source, _, mask) = Self.scene()
        let layer = try CutoutVision.layer(image: source, mask: mask)
        let count = 77
        let field = (0 ..< count).map { n in n % 9 == 4 ? Float(0) : Float(n) / Float(count) * 7 }
        var compared = 0, exact = 0, moved = 0
        for (x0, y) in [(41, 22), (41, 36), (41, 60), (41, 84), (41, 95), (0, 60), (83, 2)] {
            for (vx, vy) in [(Float(0.8), Float(0.6)), (Float(-1.3), Float(-0.4))] {
                var out = [UInt32](repeating: 0xDEAD_BEEF, count: count)
                source.pixels.withUnsafeBufferPointer { image in
                    FastCPURenderer.CutoutRows.with([layer]) { rows in
                        guard let row = rows[0] else { return XCTFail("no rows for the layer") }
                        field.withUnsafeBufferPointer { f in
                            out.withUnsafeMutableBufferPointer { o in
                                row.row(field: f.baseAddress!, count: count, x: x0, y: y, vx: vx, vy: vy, mirror: true, image: image,
                                        out: o.baseAddress!)
                            }
                        }
                    }
                    for n in 0 ..< count {
                        guard field[n] > 0 else {
                            XCTAssertEqual(out[n], 0xDEAD_BEEF, "pixel \(x0 + n), \(y): no offset, not drawn")
                            continue
                        }
                        let p = (x: Double(x0 + n) + 0.5, y: Double(y) + 0.5)
                        let q = (x: p.x + Double(field[n]) * Double(vx), y: p.y + Double(field[n]) * Double(vy))
                        let want = FastCPURenderer.composite(layer, image: image, p: p, q: q, mirror: true)
                        let a = withUnsafeBytes(of: out[n]) { Array($0) }, b = withUnsafeBytes(of: want) { Array($0) }
                        for c in 0 ..< 4 {
                            XCTAssertLessThanOrEqual(abs(Int(a[c]) - Int(b[c])), 1, "pixel \(x0 + n), \(y), channel \(c)")
                        }
                        let k = ((y * Self.width) + x0 + n) * 4
                        if a != Array(source.pixels[k ..< k + 4]) { moved += 1 }
                        if a == b { exact += 1 }
                        compared += 1
                    }
                }
            }
        }
        print("cutout rows: \(exact) of \(compared) pixels exactly the per-pixel compositing's, \(moved) unlike the source")
        XCTAssertGreaterThan(moved, compared / 5)
        XCTAssertGreaterThan(exact, compared * 9 / 10)
    }

    /// No halo: the object layer's soft edge carries less of the old
    /// background than the source's edge pixels do (its colour is unmixed
    /// from the plate: source − (1 − a)·plate), so a moving edge does not
    /// drag a fringe of the background it stood on.
    func testTheObjectsEdgeCarriesLessOfTheOldBackground() throws {
        let (source, _, mask) = Self.scene()
        let layer = try CutoutVision.layer(image: source, mask: mask)
        let b = layer.box
        var unmixed = 0.0, naive = 0.0, n = 0
        for y in b.y0 ..< b.y1 {
            for x in b.x0 ..< b.x1 {
                let a = Double(mask.pixels[y * Self.width + x]) / 255
                guard a > 0.2, a < 0.8 else { continue }
                let k = ((y - b.y0) * b.width + x - b.x0) * 4, i = (y * Self.width + x) * 4
                let truth = Self.objectColour(x, y)
                let t = [truth.0, truth.1, truth.2]
                for c in 0..<3 {
                    unmixed += abs(Double(layer.object[k + c]) / a - t[c])
                    naive += abs(Double(source.pixels[i + c]) - t[c])
                }
                n += 1
            }
        }
        XCTAssertGreaterThan(n, 20)
        print("cutout: soft edge's distance from the object's true colour: \(String(format: "%.1f", unmixed / Double(n * 3))) levels unmixed, \(String(format: "%.1f", naive / Double(n * 3))) in the source")
        XCTAssertLessThan(unmixed, naive * 0.8)
    }
}

/// A GLES renderer; a missing EGL display fails loudly unless
/// WOBBLE_SKIP_GLES=1.
func makeGLES(_ source: RGBAImage) throws -> GLESRenderer {
    if ProcessInfo.processInfo.environment["WOBBLE_SKIP_GLES"] == "1" { throw XCTSkip("WOBBLE_SKIP_GLES=1") }
    return try GLESRenderer(source: source)
}
