import Foundation
import WobbleCore
import WobbleMedia
@testable import WobbleRender
@testable import WobbleVision
import XCTest

/// Cutout mattes against composites whose alpha, foreground and background
/// are known: an object from one photo (an ellipse with a soft rim three
/// pixels wide and hair-like strands, a pixel wide and partly transparent,
/// sticking out of it) composited over another photo, `a·F + (1 − a)·B`.
final class CutoutMatteTests: XCTestCase {
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Examples")

    static func photo(_ path: String) throws -> RGBAImage {
        try ImageIO.load(path: examples.appendingPathComponent(path).path)
    }

    /// A composite: the picture, its true background, the object's true
    /// colour (the donor's, everywhere) and its true alpha.
    struct Composite {
        var name: String
        var image: RGBAImage
        var background: RGBAImage
        var foreground: RGBAImage
        var alpha: [Double]
        var truth: GreyMask
        /// The ellipse's centre and radii.
        var centre: (x: Double, y: Double)
        var radii: (Double, Double)

        /// A box around the object with `margin` pixels on each side.
        func box(margin: Int) -> PixelRect {
            let x0 = Int(centre.x - radii.0 - 13) - margin, y0 = Int(centre.y - radii.1 - 13) - margin
            let x1 = Int(centre.x + radii.0 + 13) + margin, y1 = Int(centre.y + radii.1 + 13) + margin
            return PixelRect(x0: max(0, x0), y0: max(0, y0), x1: min(image.width, x1), y1: min(image.height, y1))
        }

        var region: RegionShape { Self.rect(box(margin: 8)) }

        static func rect(_ b: PixelRect) -> RegionShape {
            SketchPoints(lt: Point(Double(b.x0), Double(b.y0)), rt: Point(Double(b.x1), Double(b.y0)),
                         rb: Point(Double(b.x1), Double(b.y1)), lb: Point(Double(b.x0), Double(b.y1))).shape
        }
    }

    /// The object's alpha at a pixel: the ellipse (centre `c`, radii `r`)
    /// with a linear rim 3 pixels wide, and five strands 12 pixels long
    /// from its edge outwards (a pixel wide, alpha 0.7 at their core).
    static func alpha(_ x: Int, _ y: Int, c: (x: Double, y: Double), r: (Double, Double)) -> Double {
        let px = Double(x) + 0.5 - c.x, py = Double(y) + 0.5 - c.y
        let e = ((px / r.0) * (px / r.0) + (py / r.1) * (py / r.1)).squareRoot()
        let inside = (e - 1) * min(r.0, r.1)          // about the distance from the edge (negative inside)
        var a = min(1, max(0, 0.5 - inside / 3))
        for k in 0..<5 {
            let t = -2.2 + Double(k) * 1.1
            let ox = cos(t) * r.0, oy = sin(t) * r.1
            let len = (ox * ox + oy * oy).squareRoot()
            let ux = ox / len, uy = oy / len
            let along = px * ux + py * uy - len, across = abs(-px * uy + py * ux)
            guard along > -2, along < 12 else { continue }
            let strand = 0.7 * min(1, max(0, 1.1 - across)) * (along > 10 ? (12 - along) / 2 : 1)
            a = max(a, strand)
        }
        return a
    }

    /// `donor`'s pixels around `from` as the object, composited over
    /// `target` at `at`.
    static func composite(_ name: String, donor: RGBAImage, from: (x: Int, y: Int), into target: RGBAImage, at: (x: Double, y: Double),
                          radii: (Double, Double)) -> Composite {
        let w = target.width, h = target.height
        var image = target, fg = target
        var alpha = [Double](repeating: 0, count: w * h)
        var truth = GreyMask(width: w, height: h)
        for y in 0..<h {
            for x in 0..<w {
                let sx = min(max(0, x - Int(at.x) + from.x), donor.width - 1), sy = min(max(0, y - Int(at.y) + from.y), donor.height - 1)
                let s = (sy * donor.width + sx) * 4, k = (y * w + x) * 4
                for c in 0..<3 { fg.pixels[k + c] = donor.pixels[s + c] }
                let a = Self.alpha(x, y, c: at, r: radii)
                let a8 = (a * 255).rounded() / 255
                alpha[y * w + x] = a8
                truth.pixels[y * w + x] = UInt8((a8 * 255).rounded())
                for c in 0..<3 {
                    image.pixels[k + c] = UInt8((a8 * Double(fg.pixels[k + c]) + (1 - a8) * Double(target.pixels[k + c])).rounded())
                }
            }
        }
        return Composite(name: name, image: image, background: target, foreground: fg, alpha: alpha, truth: truth,
                         centre: at, radii: radii)
    }

    /// Three composites: the crema on the cat's fur and the cat's fur on
    /// the wooden table (textured backgrounds), the saucer's red on the
    /// blurred room behind the cat (a smooth one).
    static func cases() throws -> [Composite] {
        let coffee = try photo("latte/coffee.png"), cat = try photo("cat/chelsea.png")
        return [
            composite("crema on the cat's fur", donor: coffee, from: (290, 150), into: cat, at: (110, 205), radii: (36, 24)),
            composite("fur on the wooden table", donor: cat, from: (230, 120), into: coffee, at: (520, 190), radii: (40, 34)),
            composite("saucer on the blurred room", donor: coffee, from: (125, 215), into: cat, at: (398, 120), radii: (24, 30)),
        ]
    }

    /// The hard mask a segmentation gives: alpha at least a half.
    static func hard(_ c: Composite) -> GreyMask {
        GreyMask(width: c.truth.width, height: c.truth.height, pixels: c.truth.pixels.map { $0 >= 128 ? 255 : 0 })
    }

    /// A frame moving the object by up to `peak` pixels along (0.8, 0.6)
    /// (the region around it swung fully).
    static func frame(_ c: Composite, layer: CutoutLayer, peakPixels: Double, swing: Double = 1) -> FrameState {
        let shape = c.region
        let region = RegionFrame(shape: shape, peak: peakPixels, direction: Point(0.8, 0.6), swing: swing, pin: nil, cutout: layer)
        return FrameState(index: 1, time: 0.1, regions: [region], edges: .mirror)
    }

    /// The soft rim and strands (0 < true alpha < 1) that the moved object
    /// leaves entirely (the true alpha is 0 under the four pixels a
    /// bilinear sample at the displaced point reads).
    static func uncoveredRim(_ c: Composite, frame: FrameState) -> [Bool] {
        let w = c.image.width, h = c.image.height
        var out = [Bool](repeating: false, count: w * h)
        for y in 0..<h {
            for x in 0..<w where c.alpha[y * w + x] > 0 && c.alpha[y * w + x] < 1 {
                let p = Point(Double(x) + 0.5, Double(y) + 0.5)
                guard let off = frame.regions[0].offset(at: p) else { continue }
                let q = p + off
                let fx = Int((q.x - 0.5).rounded(.down)), fy = Int((q.y - 0.5).rounded(.down))
                var covered = false
                for (xx, yy) in [(fx, fy), (fx + 1, fy), (fx, fy + 1), (fx + 1, fy + 1)]
                where xx >= 0 && yy >= 0 && xx < w && yy < h && c.alpha[yy * w + xx] > 0 { covered = true }
                out[y * w + x] = !covered
            }
        }
        return out
    }

    static func psnr(_ a: RGBAImage, _ b: RGBAImage, where pick: [Bool]) -> Double {
        PSNR.of(a, b, channels: .rgb, where: { pick[$0] })
    }

    static func f1(_ v: Double) -> String { String(format: "%.1f", v) }

    /// The matte of a hard mask (what a segmentation gives) comes close to
    /// the true alpha: the soft rim and the strands are found in the band.
    /// Both methods measured (docs/DECISIONS.md: the closed-form one, the
    /// default, is the better on two of three and level on the third).
    func testTheMatteOfAHardMaskFindsTheTrueAlpha() throws {
        for c in try Self.cases() {
            let hard = Self.hard(c)
            let sadHard = CutoutVision.alphaSAD(hard, c.truth)
            let clock = ContinuousClock()
            var closed = hard, guided = hard
            let tClosed = try clock.measure { closed = try CutoutVision.matte(image: c.image, mask: hard, band: 3) }
            let tGuided = try clock.measure { guided = try CutoutVision.matte(image: c.image, mask: hard, band: 3, method: .guided) }
            let sadClosed = CutoutVision.alphaSAD(closed, c.truth), sadGuided = CutoutVision.alphaSAD(guided, c.truth)
            print("matte: \(c.name): alpha SAD \(Self.f1(sadHard)) hard mask, \(Self.f1(sadGuided)) guided filter (\(tGuided)), "
                  + "\(Self.f1(sadClosed)) closed form (\(tClosed))")
            XCTAssertLessThan(sadClosed, sadHard * 0.6, c.name)
            XCTAssertLessThan(sadGuided, sadHard * 0.6, c.name)
            // Outside the band the mask is the hard mask's.
            XCTAssertEqual(closed.pixels[0], 0)
            XCTAssertEqual(closed.pixels[Int(c.centre.y) * c.image.width + Int(c.centre.x)], 255)
            // Deterministic.
            XCTAssertEqual(try CutoutVision.matte(image: c.image, mask: hard, band: 3), closed)
        }
    }

    /// `cutout = "auto"` gives a soft, full-resolution matte close to the
    /// true alpha, and the rim the moving object uncovers shows the true
    /// background (≥ 26 dB), where the hard mask's inpainted plate did not.
    func testAutoMattesTheEdgeAndTheUncoveredRimIsTheBackground() throws {
        for c in try Self.cases() {
            let box = c.box(margin: 8)
            let auto = try CutoutVision.objectMask(image: c.image, box: box, region: c.region)
            let sadAuto = CutoutVision.alphaSAD(auto, c.truth), sadHard = CutoutVision.alphaSAD(Self.hard(c), c.truth)
            let levels = Set(auto.pixels).count
            print("auto: \(c.name): alpha SAD \(Self.f1(sadAuto)) (the true mask made hard: \(Self.f1(sadHard))), \(levels) levels")
            XCTAssertLessThan(sadAuto, sadHard, c.name)
            XCTAssertGreaterThan(levels, 64, "\(c.name): a soft matte, not a few blocky levels")
            let layer = try CutoutVision.layer(image: c.image, mask: auto)
            let old = try CutoutVision.layer(image: c.image, mask: Self.hard(c))
            let cpu = CPURenderer(source: c.image)
            for swing in [1.0, -1.0] {
                let f = Self.frame(c, layer: layer, peakPixels: 7, swing: swing)
                let rim = Self.uncoveredRim(c, frame: f)
                let n = rim.filter { $0 }.count
                XCTAssertGreaterThan(n, 80, c.name)
                let db = Self.psnr(try cpu.render(f), c.background, where: rim)
                let dbOld = Self.psnr(try cpu.render(Self.frame(c, layer: old, peakPixels: 7, swing: swing)), c.background, where: rim)
                print("auto: \(c.name), swing \(swing): uncovered rim (\(n) px) against the true background: \(Self.f1(db)) dB "
                      + "(a hard mask and its inpainted plate: \(Self.f1(dbOld)) dB)")
                XCTAssertGreaterThanOrEqual(db, 26, c.name)
            }
        }
    }

    /// A user's soft mask (the true alpha) is used as given, and its
    /// layer's plate holds the true background where the mask is soft.
    func testAUsersSoftMaskGetsTheBackgroundInItsPlate() throws {
        for c in try Self.cases() {
            let plate = try CutoutVision.plate(image: c.image, mask: c.truth)
            let soft = c.truth.pixels.map { $0 != 0 && $0 < 200 }
            let db = Self.psnr(plate, c.background, where: soft)
            let unmixed = Self.psnr(c.image, c.background, where: soft)
            print("plate: \(c.name): soft pixels (alpha < 0.78) against the true background: \(Self.f1(db)) dB (the picture itself: \(Self.f1(unmixed)) dB)")
            XCTAssertGreaterThan(db, unmixed + 6, c.name)
            for k in 0 ..< c.image.width * c.image.height where c.truth.pixels[k] == 0 {
                XCTAssertEqual(plate.pixels[k * 4 ..< k * 4 + 4], c.image.pixels[k * 4 ..< k * 4 + 4])
            }
        }
    }

    /// Pixels whose Chebyshev distance from the true object (alpha above
    /// 0) is more than `margin`.
    static func beyond(_ c: Composite, margin: Int) -> [Bool] {
        let w = c.image.width, h = c.image.height
        var near = [Bool](repeating: false, count: w * h)
        for y in 0..<h {
            for x in 0..<w where c.truth.pixels[y * w + x] != 0 {
                for yy in max(0, y - margin)...min(h - 1, y + margin) {
                    for xx in max(0, x - margin)...min(w - 1, x + margin) { near[yy * w + xx] = true }
                }
            }
        }
        return near.map { !$0 }
    }

    /// `"auto"` on textured photos never takes background texture with it:
    /// every pixel more than 12 pixels beyond the object is exactly the
    /// source in every frame (the object moving up to 6 pixels), and the
    /// mask is 0 there, whatever the box's margin around the object.
    func testAutoStaysOnTheObject() throws {
        for c in try Self.cases() {
            // A box 40 px larger than the object: GrabCut alone took a
            // piece of the wooden table 12 px beyond the fur (56 pixels).
            for margin in [8, 24, 40] {
                let box = c.box(margin: margin)
                let region = Composite.rect(box)
                let auto = try CutoutVision.objectMask(image: c.image, box: box, region: region)
                let far = Self.beyond(c, margin: 12)
                let leaked = (0 ..< far.count).filter { far[$0] && auto.pixels[$0] != 0 }.count
                XCTAssertEqual(leaked, 0, "\(c.name), box margin \(margin): mask pixels beyond 12 px of the object")
                let layer = try CutoutVision.layer(image: c.image, mask: auto)
                let cpu = CPURenderer(source: c.image)
                var worst = 0
                for swing in [1.0, -0.7, 0.4] {
                    let f = FrameState(index: 1, time: 0.1, regions: [RegionFrame(shape: region, peak: 6, direction: Point(0.6, -0.8),
                                                                                  swing: swing, cutout: layer)], edges: .mirror)
                    let out = try cpu.render(f)
                    for k in 0 ..< far.count where far[k] {
                        for ch in 0..<4 { worst = max(worst, abs(Int(out.pixels[k * 4 + ch]) - Int(c.image.pixels[k * 4 + ch]))) }
                    }
                }
                print("auto stays: \(c.name), box margin \(margin): \(leaked) mask pixels and at most \(worst) levels of change beyond 12 px")
                XCTAssertEqual(worst, 0, "\(c.name), box margin \(margin)")
            }
        }
    }
}

/// The plate behind a matte keeps the texture around the hole (gradient
/// energy, against the hard mask's inpainted plate and the true
/// background), and the matte has no stair-stepped levels.
final class CutoutPlateTests: XCTestCase {
    /// The mean absolute difference between neighbours (right and below)
    /// of `image` over the pixels `pick`.
    static func gradientEnergy(_ image: RGBAImage, where pick: [Bool]) -> Double {
        let w = image.width, h = image.height
        var sum = 0.0, n = 0
        for y in 0 ..< h - 1 {
            for x in 0 ..< w - 1 where pick[y * w + x] {
                let k = (y * w + x) * 4
                for c in 0..<3 {
                    sum += abs(Double(image.pixels[k + c]) - Double(image.pixels[k + 4 + c]))
                    sum += abs(Double(image.pixels[k + c]) - Double(image.pixels[k + w * 4 + c]))
                }
                n += 1
            }
        }
        return n == 0 ? 0 : sum / Double(n * 6)
    }

    func testThePlateKeepsTheTextureAroundTheHole() throws {
        for c in try CutoutMatteTests.cases() {
            let box = c.box(margin: 8)
            let auto = try CutoutVision.objectMask(image: c.image, box: box, region: c.region)
            let hard = CutoutMatteTests.hard(c)
            let plate = try CutoutVision.plate(image: c.image, mask: auto)
            // Today's plate of a hard mask: Telea's fill (as before the
            // texture fill: the matte's plate keeps at least its texture).
            let old = try CutoutVision.plate(image: c.image, mask: hard, method: .telea)
            // The band: the pixels either mask holds but not at 255 in both.
            let band = (0 ..< auto.pixels.count).map { k in
                (auto.pixels[k] != 0 || hard.pixels[k] != 0) && !(auto.pixels[k] == 255 && hard.pixels[k] == 255)
            }
            let hole = (0 ..< auto.pixels.count).map { auto.pixels[$0] != 0 || hard.pixels[$0] != 0 }
            let eNew = Self.gradientEnergy(plate, where: hole), eOld = Self.gradientEnergy(old, where: hole)
            let eTrue = Self.gradientEnergy(c.background, where: hole)
            // Where both masks are 255 both plates are inpainted: the fill
            // is at least as textured as today's.
            let inner = (0 ..< auto.pixels.count).map { auto.pixels[$0] == 255 && hard.pixels[$0] == 255 }
            let iNew = Self.gradientEnergy(plate, where: inner), iOld = Self.gradientEnergy(old, where: inner)
            let bandNew = CutoutMatteTests.psnr(plate, c.background, where: band)
            let bandOld = CutoutMatteTests.psnr(old, c.background, where: band)
            let f = CutoutMatteTests.f1
            print("plate: \(c.name): gradient energy inside both \(f(iNew)) (hard mask's plate \(f(iOld))), over the whole hole \(f(eNew)) "
                  + "(hard mask's plate \(f(eOld)), with what it leaves of the object's edge; true background \(f(eTrue))); "
                  + "the band against the true background \(f(bandNew)) dB (hard mask's plate \(f(bandOld)) dB)")
            XCTAssertGreaterThanOrEqual(iNew, iOld, c.name)
            // No flat or stair-stepped band: every soft level of the matte
            // occurs, not a few.
            XCTAssertGreaterThan(Set(auto.pixels).count, 200, c.name)
        }
    }
}

/// The background under a large object's soft edge is estimated tile by
/// tile (memory follows the edge, not the object's area): as close to the
/// true background as the estimate in one piece.
final class CutoutBackgroundTileTests: XCTestCase {
    func testTilesEstimateTheBackgroundAsWellAsOnePiece() throws {
        let cat = try CutoutMatteTests.photo("cat/chelsea.png"), coffee = try CutoutMatteTests.photo("latte/coffee.png")
        let c = CutoutMatteTests.composite("a large disc", donor: cat, from: (225, 150), into: coffee, at: (300, 200), radii: (170, 160))
        let w = c.image.width, h = c.image.height
        var rgb = [UInt8](repeating: 0, count: w * h * 3)
        for k in 0 ..< w * h { for ch in 0..<3 { rgb[k * 3 + ch] = c.image.pixels[k * 4 + ch] } }
        let tiled = try CutoutVision.estimatedBackground(rgb: rgb, alpha: c.truth.pixels, width: w, height: h)
        let whole = try CutoutVision.estimatedBackground(rgb: rgb, alpha: c.truth.pixels, width: w, height: h, tile: max(w, h))
        func db(_ b: [UInt8]) -> Double {
            var sum = 0.0, n = 0
            for k in 0 ..< w * h where c.truth.pixels[k] != 0 && c.truth.pixels[k] < 200 {
                for ch in 0..<3 {
                    let d = Double(b[k * 3 + ch]) - Double(c.background.pixels[k * 4 + ch])
                    sum += d * d; n += 1
                }
            }
            return 10 * log10(255 * 255 / (sum / Double(max(1, n))))
        }
        let dbTiled = db(tiled), dbWhole = db(whole)
        print("background tiles: soft pixels (alpha < 0.78) against the true background: tiled \(CutoutMatteTests.f1(dbTiled)) dB, one piece \(CutoutMatteTests.f1(dbWhole)) dB")
        XCTAssertGreaterThanOrEqual(dbTiled, dbWhole - 0.5)
        XCTAssertGreaterThan(dbTiled, 26)
    }
}
