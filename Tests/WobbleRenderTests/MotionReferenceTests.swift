import Foundation
import WobbleCore
import WobbleMedia
@testable import WobbleRender
import XCTest

/// An independent reference of the wobble model and its scene-wide options, written from their description alone
/// (its own boundary search, hemisphere, cycles, spring, summing,
/// mirrored/clamped bilinear sampling, area averaging): frames of scenes
/// built through `Scene` and rendered by both backends must come within
/// 38 dB of it on every frame.
enum Reference {
    struct Region {
        var lt: Point, rt: Point, rb: Point, lb: Point, center: Point
        var parameters: WobbleParameters
        /// (time, direction (not normalised), amplitude), in time order.
        var kicks: [(t: Double, d: Point, a: Double)]
    }

    static func bezier(_ p0: Point, _ p1: Point, _ p2: Point, _ t: Double) -> Point {
        let u = 1 - t
        return Point(u * u * p0.x + 2 * t * u * p1.x + t * t * p2.x, u * u * p0.y + 2 * t * u * p1.y + t * t * p2.y)
    }

    /// R along unit `u`: the nearest crossing of the ray with the four
    /// curves, by scanning each curve for sign changes of the cross product
    /// and bisecting.
    static func boundaryDistance(_ r: Region, _ u: Point) -> Double? {
        let mL = Point.mid(r.lt, r.lb), mT = Point.mid(r.lt, r.rt), mR = Point.mid(r.rt, r.rb), mB = Point.mid(r.rb, r.lb)
        let curves = [(mL, r.lt, mT), (mT, r.rt, mR), (mR, r.rb, mB), (mB, r.lb, mL)]
        var best = Double.infinity
        for (p0, p1, p2) in curves {
            func f(_ t: Double) -> Double {
                let v = bezier(p0, p1, p2, t) - r.center
                return v.x * u.y - v.y * u.x
            }
            let n = 48
            var t0 = 0.0, f0 = f(0)
            for i in 1 ... n {
                let t1 = Double(i) / Double(n), f1 = f(t1)
                if f0 == 0 || f0 * f1 < 0 {
                    var lo = t0, hi = t1, flo = f0
                    if f0 != 0 {
                        for _ in 0 ..< 60 {
                            let mid = (lo + hi) / 2, fm = f(mid)
                            if (fm < 0) == (flo < 0) { lo = mid; flo = fm } else { hi = mid }
                        }
                    }
                    let v = bezier(p0, p1, p2, f0 == 0 ? t0 : (lo + hi) / 2) - r.center
                    let along = v.x * u.x + v.y * u.y
                    if along > 0 { best = min(best, along) }
                }
                t0 = t1; f0 = f1
            }
            if f0 == 0 {
                let v = bezier(p0, p1, p2, 1) - r.center
                let along = v.x * u.x + v.y * u.y
                if along > 0 { best = min(best, along) }
            }
        }
        return best.isFinite ? best : nil
    }

    /// (level for M, offset per unit m) of a region at `t`, or nil when still.
    static func motion(_ r: Region, at t: Double) -> (level: Double, perM: Point)? {
        let p = r.parameters
        let kicks = r.kicks.filter { $0.t <= t + 1e-9 }
        guard let last = kicks.last else { return nil }
        func unit(_ d: Point) -> Point { d / d.length }
        switch p.motion {
        case .classic:
            // Only the latest impulse counts; amplitude × decay at each t0 + n·D.
            var amp = last.a, start = last.t
            while start + p.duration <= t + 1e-9 && amp > 0 {
                amp *= p.decay
                if amp < p.threshold { amp = 0 }
                start += p.duration
            }
            guard amp > 0 else { return nil }
            let tau = t - start, dd = p.duration
            var u = (2 * tau).truncatingRemainder(dividingBy: dd)
            if u < 0 { u += dd }
            let x = (u > dd / 2 ? dd - u : u) / (dd / 2)
            let progress = (tau < dd / 2 ? -1.0 : 1.0) * (2 * x - x * x)
            return (amp, unit(last.d) * progress)
        case .spring:
            let z = p.damping, w = 2 * Double.pi / p.duration
            let wd = w * (1 - z * z).squareRoot()
            let tStar = atan2((1 - z * z).squareRoot(), z) / wd
            let c = (1 - z * z).squareRoot() * exp(-z * w * tStar)
            var s = Point.zero, e = 0.0, eLast = 0.0
            for k in kicks {
                let tau = t - k.t
                s = s + unit(k.d) * (k.a * exp(-z * w * tau) * sin(wd * tau) / c)
                e += k.a * exp(-z * w * tau) / c
                eLast += k.a * exp(-z * w * (last.t - k.t)) / c
            }
            // Still from the first time after the last kick with E < threshold.
            let rest = last.t + log(eLast / p.threshold) / (z * w)
            guard t < rest - 1e-9, e > 0 else { return nil }
            return (min(e, 4), s * (-1 / e))
        default:
            XCTFail("no reference for motion \(p.motion)")
            return nil
        }
    }

    /// The offset region `r` gives output pixel centre `q` at `t` (nil outside).
    static func offset(_ r: Region, _ q: Point, at t: Double) -> Point? {
        guard let (level, perM) = motion(r, at: t) else { return nil }
        let xs = [r.lt.x, r.rt.x, r.rb.x, r.lb.x], ys = [r.lt.y, r.rt.y, r.rb.y, r.lb.y]
        let bw = xs.max()! - xs.min()!, bh = ys.max()! - ys.min()!
        let mPeak = r.parameters.strength * min(bw, bh) * level
        let v = q - r.center
        let d = v.length
        if d == 0 { return perM * mPeak }
        guard let rr = boundaryDistance(r, v / d), d <= rr else { return nil }
        let mm = min(mPeak, rr)
        let thetaC = acos(mm / rr), theta = acos(min(d / rr, 1))
        let m = rr * (cos(theta * thetaC / (Double.pi / 2)) - cos(theta))
        return m > 0 ? perM * m : nil
    }

    /// Bilinear sample with GL-style texel wrapping (mirror: index i outside
    /// [0, n) reads n-periodic reflections; clamp: the edge texel).
    static func sample(_ img: RGBAImage, _ p: Point, _ edges: EdgeMode) -> [Double] {
        func wrap(_ i: Int, _ n: Int) -> Int {
            switch edges {
            case .clamp: return min(max(i, 0), n - 1)
            case .mirror:
                var k = i % (2 * n)
                if k < 0 { k += 2 * n }
                return k >= n ? 2 * n - 1 - k : k
            }
        }
        let u = p.x - 0.5, v = p.y - 0.5
        let i0 = Int(u.rounded(.down)), j0 = Int(v.rounded(.down))
        let fx = u - Double(i0), fy = v - Double(j0)
        // On premultiplied values, divided by the alpha again (straight
        // where the alpha rounds to 0: nothing is visible there).
        var out = [0.0, 0, 0, 0], premultiplied = [0.0, 0, 0]
        for (di, dj, w) in [(0, 0, (1 - fx) * (1 - fy)), (1, 0, fx * (1 - fy)), (0, 1, (1 - fx) * fy), (1, 1, fx * fy)] {
            let i = wrap(i0 + di, img.width), j = wrap(j0 + dj, img.height)
            let a = Double(img.pixels[(j * img.width + i) * 4 + 3])
            for c in 0 ..< 4 { out[c] += w * Double(img.pixels[(j * img.width + i) * 4 + c]) }
            for c in 0 ..< 3 { premultiplied[c] += w * a * Double(img.pixels[(j * img.width + i) * 4 + c]) }
        }
        if out[3] >= 0.5 { for c in 0 ..< 3 { out[c] = premultiplied[c] / out[3] } }
        return out
    }

    /// The full-size frame at `t`.
    static func render(_ source: RGBAImage, _ regions: [Region], at t: Double, overlap: OverlapMode, edges: EdgeMode) -> RGBAImage {
        var out = source
        for j in 0 ..< source.height {
            for i in 0 ..< source.width {
                let q = Point(Double(i) + 0.5, Double(j) + 0.5)
                var total: Point?
                for r in regions {
                    guard let o = offset(r, q, at: t) else { continue }
                    total = (total ?? .zero) + o
                    if overlap == .first { break }
                }
                guard let o = total else { continue }
                let v = sample(source, q + o, edges)
                for c in 0 ..< 4 { out.pixels[(j * source.width + i) * 4 + c] = UInt8(min(max(v[c].rounded(), 0), 255)) }
            }
        }
        return out
    }

    /// `img` area-averaged to `w × h`: each output pixel the mean over its
    /// footprint, partial pixels weighted by the covered area.
    static func areaAverage(_ img: RGBAImage, _ w: Int, _ h: Int) -> RGBAImage {
        let sx = Double(img.width) / Double(w), sy = Double(img.height) / Double(h)
        var out = RGBAImage(width: w, height: h)
        for j in 0 ..< h {
            for i in 0 ..< w {
                let x0 = Double(i) * sx, x1 = x0 + sx, y0 = Double(j) * sy, y1 = y0 + sy
                var acc = [0.0, 0, 0, 0], premultiplied = [0.0, 0, 0]
                for y in Int(y0) ..< min(img.height, Int(y1.rounded(.up))) {
                    let wy = min(y1, Double(y + 1)) - max(y0, Double(y))
                    for x in Int(x0) ..< min(img.width, Int(x1.rounded(.up))) {
                        let wx = min(x1, Double(x + 1)) - max(x0, Double(x))
                        let a = Double(img.pixels[(y * img.width + x) * 4 + 3])
                        for c in 0 ..< 4 { acc[c] += wx * wy * Double(img.pixels[(y * img.width + x) * 4 + c]) }
                        for c in 0 ..< 3 { premultiplied[c] += wx * wy * a * Double(img.pixels[(y * img.width + x) * 4 + c]) }
                    }
                }
                // Premultiplied: colour × alpha averaged, divided by the averaged alpha.
                if acc[3] / (sx * sy) >= 0.5 { for c in 0 ..< 3 { acc[c] = premultiplied[c] / acc[3] * (sx * sy) } }
                for c in 0 ..< 4 { out.pixels[(j * w + i) * 4 + c] = UInt8(min(max((acc[c] / (sx * sy)).rounded(), 0), 255)) }
            }
        }
        return out
    }

    /// PSNR in dB over all channels (infinity when equal).
    static func psnr(_ a: RGBAImage, _ b: RGBAImage) -> Double {
        precondition(a.width == b.width && a.height == b.height)
        return PSNR.of(a, b, channels: .rgba)
    }

    /// The clip of a scene with `regions` (in prepare order), their kicks
    /// applied through `Scene` at their times, lasting `duration`.
    static func clip(_ regions: [Region], width: Int, height: Int, duration: Double, overlap: OverlapMode = .sum,
                     edges: EdgeMode = .mirror) throws -> Clip {
        let scene = Scene()
        scene.imageSize = (width, height)
        try scene.setOverlap(overlap)
        try scene.setEdges(edges)
        for r in regions {
            scene.addSketch(lt: r.lt, rt: r.rt, rb: r.rb, lb: r.lb, center: r.center, parameters: r.parameters)
        }
        let models = scene.prepare()
        var events: [(t: Double, model: Int, d: Point, a: Double)] = []
        for (k, r) in regions.enumerated() { for kick in r.kicks { events.append((kick.t, k, kick.d, kick.a)) } }
        for e in events.sorted(by: { $0.t < $1.t }) {
            try scene.wait(max(0, e.t - scene.now))
            try scene.impulse(models[e.model], dx: e.d.x, dy: e.d.y, amplitude: e.a)
        }
        try scene.wait(max(0, duration - scene.now))
        return try scene.finish()
    }
}

final class MotionReferenceTests: XCTestCase {
    func rectRegion(_ x: Double, _ y: Double, _ w: Double, _ h: Double, center: Point, _ p: WobbleParameters,
                    _ kicks: [(t: Double, d: Point, a: Double)]) -> Reference.Region {
        Reference.Region(lt: Point(x, y), rt: Point(x + w, y), rb: Point(x + w, y + h), lb: Point(x, y + h), center: center,
                         parameters: p, kicks: kicks)
    }

    /// Nested springs (a face and its nose), and a classic region reaching
    /// past the top-left corner, overlapping the face.
    func scene() -> [Reference.Region] {
        let face = rectRegion(8, 6, 70, 52, center: Point(43.3, 32.2), .spring,
                              [(0, Point(1, 0.3), 1), (0.35, Point(-0.2, 1), 0.8)])
        let nose = rectRegion(30, 22, 24, 18, center: Point(42.1, 31.3),
                              WobbleParameters(motion: .spring, duration: 0.8, damping: 0.2, strength: 0.12),
                              [(0.1, Point(0, 1), 1.5), (0.5, Point(1, -1), 1)])
        let corner = Reference.Region(lt: Point(-6, -4), rt: Point(30, -2), rb: Point(28, 24), lb: Point(-4, 22),
                                      center: Point(11.2, 9.7), parameters: .original, kicks: [(0.05, Point(-1, -1), 2.5)])
        return [face, nose, corner]
    }

    func checkAgainstReference(overlap: OverlapMode, edges: EdgeMode, label: String) throws {
        let source = testImage(width: 96, height: 64, seed: 23)
        let regions = scene()
        let clip = try Reference.clip(regions, width: 96, height: 64, duration: 1.4, overlap: overlap, edges: edges)
        let cpu = CPURenderer(source: source)
        let gles = try makeGLES(source)
        var worst = Double.infinity
        for k in [3, 6, 9, 12, 16, 20, 27, 35, 41] {
            let frame = clip.frame(k)
            XCTAssertFalse(frame.regions.isEmpty, "frame \(k) moves")
            let ref = Reference.render(source, regions, at: frame.time, overlap: overlap, edges: edges)
            XCTAssertGreaterThan(Reference.psnr(ref, source).isFinite ? 1 : 0, 0, "frame \(k) differs from the still image")
            for (name, out) in [("cpu", try cpu.render(frame)), ("gles", try gles.render(frame))] {
                let db = Reference.psnr(out, ref)
                worst = min(worst, db)
                XCTAssertGreaterThanOrEqual(db, 38, "\(label) \(name) frame \(k): \(db) dB")
                if k == 12 { dumpPNG(out, name: "reference-\(label)-\(name)") }
            }
            if k == 12 { dumpPNG(ref, name: "reference-\(label)-ref") }
        }
        print("reference \(label): worst frame \(String(format: "%.1f", worst)) dB over both backends")
    }

    func testSpringSumMirrorAgainstTheReference() throws {
        try checkAgainstReference(overlap: .sum, edges: .mirror, label: "sum-mirror")
    }

    func testFirstClampAgainstTheReference() throws {
        try checkAgainstReference(overlap: .first, edges: .clamp, label: "first-clamp")
    }

    /// A horizontal ramp (R = 2x): neighbouring pixels differ by the local
    /// stretch of the offset field.
    func ramp(_ w: Int, _ h: Int) -> RGBAImage {
        var img = RGBAImage(width: w, height: h)
        for y in 0 ..< h {
            for x in 0 ..< w {
                img.pixels[(y * w + x) * 4] = UInt8(min(2 * x, 255))
                img.pixels[(y * w + x) * 4 + 1] = 128
                img.pixels[(y * w + x) * 4 + 2] = UInt8(min(2 * y, 255))
                img.pixels[(y * w + x) * 4 + 3] = 255
            }
        }
        return img
    }

    func testNoCreaseWithSumCreaseWithFirst() throws {
        // The nose first in prepare order, inside the face; both kicked
        // along x. Across the nose's boundary the first-wins offset jumps
        // from the nose's (0 at its rim) to the face's; summed, it does not.
        let source = ramp(128, 96)
        let nose = rectRegion(44, 32, 40, 32, center: Point(64.3, 48.2), .spring, [(0, Point(1, 0), 1)])
        let face = rectRegion(8, 8, 112, 80, center: Point(64.1, 47.9), .spring, [(0, Point(1, 0), 1.5)])
        let noseShape = RegionShape(lt: nose.lt, rt: nose.rt, rb: nose.rb, lb: nose.lb, center: nose.center)
        let faceShape = RegionShape(lt: face.lt, rt: face.rt, rb: face.rb, lb: face.lb, center: face.center)
        var results: [String: (across: Int, elsewhere: Int)] = [:]
        for overlap in [OverlapMode.sum, .first] {
            let clip = try Reference.clip([nose, face], width: 128, height: 96, duration: 0.5, overlap: overlap)
            let frame = clip.frame(8)   // t = 0.267 s, near the first peak
            XCTAssertEqual(frame.regions.count, 2)
            for (name, renderer) in [("cpu", CPURenderer(source: source) as FrameRenderer), ("gles", try makeGLES(source))] {
                let out = try renderer.render(frame)
                dumpPNG(out, name: "crease-\(overlap)-\(name)")
                var across = 0, elsewhere = 0
                for y in 0 ..< 96 {
                    for x in 0 ..< 127 {
                        let a = Point(Double(x) + 0.5, Double(y) + 0.5), b = Point(Double(x) + 1.5, Double(y) + 0.5)
                        guard faceShape.contains(a), faceShape.contains(b) else { continue }
                        let d = abs(Int(out.pixels[(y * 128 + x + 1) * 4]) - Int(out.pixels[(y * 128 + x) * 4]))
                        if noseShape.contains(a) != noseShape.contains(b) { across = max(across, d) } else { elsewhere = max(elsewhere, d) }
                    }
                }
                results["\(overlap)-\(name)"] = (across, elsewhere)
                print("crease \(overlap) \(name): max neighbour difference across the nose's rim \(across), elsewhere inside \(elsewhere)")
            }
        }
        for name in ["cpu", "gles"] {
            let sum = try XCTUnwrap(results["sum-\(name)"]), first = try XCTUnwrap(results["first-\(name)"])
            XCTAssertLessThanOrEqual(sum.across, sum.elsewhere, "\(name): no crease with sum")
            XCTAssertGreaterThan(first.across, first.elsewhere + 4, "\(name): first-wins shows the crease")
        }
    }

    func testDownscaledFramesAreTheFullSizeFramesAreaAveraged() throws {
        // The cat photo, a face and a nose on springs; --width 150 (a third).
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Examples/cat/chelsea.png").path
        let source = try ImageIO.load(path: path)
        let face = rectRegion(90, 40, 280, 250, center: Point(230, 165), .spring, [(0, Point(1, 0.2), 1), (0.3, Point(0, 1), 1)])
        let nose = rectRegion(200, 140, 70, 60, center: Point(236, 172), .spring, [(0.15, Point(-1, 0.5), 1.5)])
        let clip = try Reference.clip([face, nose], width: source.width, height: source.height, duration: 1)
        let w = 150, h = 100   // 451×300 → 150×100 (the --width rule: round(300·150/451) = 100)
        let fullCPU = CPURenderer(source: source)
        let smallCPU = CPURenderer(source: source, outputWidth: w, outputHeight: h)
        let fullGLES = try makeGLES(source)
        let smallGLES = try makeGLES(source, outputWidth: w, outputHeight: h)
        var worst = Double.infinity
        for k in [0, 4, 8, 12, 18, 26] {
            let frame = clip.frame(k)
            for (name, full, small) in [("cpu", fullCPU as FrameRenderer, smallCPU as FrameRenderer),
                                        ("gles", fullGLES, smallGLES)] {
                let expected = Reference.areaAverage(try full.render(frame), w, h)
                let got = try small.render(frame)
                let db = Reference.psnr(got, expected)
                worst = min(worst, db)
                XCTAssertGreaterThanOrEqual(db, 35, "\(name) frame \(k): \(db) dB")
                if k == 8 { dumpPNG(got, name: "downscale-\(name)"); dumpPNG(expected, name: "downscale-\(name)-expected") }
            }
        }
        // Point sampling (the old way) is measurably worse on this photo.
        let point = pointSampled(try fullCPU.render(clip.frame(8)), w, h)
        let pointDB = Reference.psnr(point, Reference.areaAverage(try fullCPU.render(clip.frame(8)), w, h))
        print("downscale: worst frame \(String(format: "%.1f", worst)) dB; point sampling \(String(format: "%.1f", pointDB)) dB")
        XCTAssertLessThan(pointDB, worst)
    }

    /// 360 → 120 (a third) on the coffee photo, a cup and its rim on springs
    /// moving hard: the renderers (the wobbled frame area-averaged) against
    /// the full-size frames area-averaged, next to the way it was done before
    /// (the image area-averaged first, then sampled at the displaced
    /// positions), which loses where the displacement varies within a pixel.
    func testAThirdOfTheSizeFiltersTheWobbledFrame() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Examples/latte/coffee.png").path
        let photo = try ImageIO.load(path: path)
        // The middle 360×240 of the photo.
        var source = RGBAImage(width: 360, height: 240)
        for y in 0 ..< 240 {
            let from = ((y + 80) * photo.width + 120) * 4
            source.pixels.replaceSubrange((y * 360 * 4) ..< ((y + 1) * 360 * 4), with: photo.pixels[from ..< from + 360 * 4])
        }
        let cup = rectRegion(60, 20, 240, 200, center: Point(180, 120),
                             WobbleParameters(motion: .spring, duration: 0.7, damping: 0.08, strength: 0.12),
                             [(0, Point(1, 0.4), 2), (0.2, Point(-0.3, 1), 2)])
        let rim = rectRegion(110, 50, 140, 120, center: Point(180, 110), .spring, [(0.1, Point(0, -1), 3)])
        let clip = try Reference.clip([cup, rim], width: 360, height: 240, duration: 1)
        let (w, h) = (120, 80)
        let full = CPURenderer(source: source)
        let renderers: [(String, FrameRenderer)] = [("cpu", CPURenderer(source: source, outputWidth: w, outputHeight: h)),
                                                    ("gles", try makeGLES(source, outputWidth: w, outputHeight: h))]
        let prefiltered = Reference.areaAverage(source, w, h)
        var worst = (after: Double.infinity, before: Double.infinity)
        for k in [4, 8, 12, 16, 22] {
            let frame = clip.frame(k)
            let expected = Reference.areaAverage(try full.render(frame), w, h)
            for (name, r) in renderers {
                let db = Reference.psnr(try r.render(frame), expected)
                worst.after = min(worst.after, db)
                XCTAssertGreaterThanOrEqual(db, 35, "\(name) frame \(k): \(db) dB")
            }
            // Before: the prefiltered image sampled at p + offset(p), p the output pixel's source point.
            var old = prefiltered
            for j in 0 ..< h {
                for i in 0 ..< w {
                    let q = Point((Double(i) + 0.5) * 3, (Double(j) + 0.5) * 3)
                    var total: Point?
                    for r in [cup, rim] {
                        if let o = Reference.offset(r, q, at: frame.time) { total = (total ?? .zero) + o }
                    }
                    guard let o = total else { continue }
                    let v = Reference.sample(prefiltered, Point((q.x + o.x) / 3, (q.y + o.y) / 3), .mirror)
                    for c in 0 ..< 4 { old.pixels[(j * w + i) * 4 + c] = UInt8(min(max(v[c].rounded(), 0), 255)) }
                }
            }
            worst.before = min(worst.before, Reference.psnr(old, expected))
        }
        print("downscale 360→120: worst frame \(String(format: "%.1f", worst.after)) dB (the wobbled frame filtered); "
              + "\(String(format: "%.1f", worst.before)) dB before (the image filtered, then displaced)")
        XCTAssertGreaterThan(worst.after, worst.before)
    }

    /// Bilinear at each output pixel's source point: what a downscale without
    /// filtering gives.
    func pointSampled(_ img: RGBAImage, _ w: Int, _ h: Int) -> RGBAImage {
        var out = RGBAImage(width: w, height: h)
        let sx = Double(img.width) / Double(w), sy = Double(img.height) / Double(h)
        for j in 0 ..< h {
            for i in 0 ..< w {
                let v = Reference.sample(img, Point((Double(i) + 0.5) * sx, (Double(j) + 0.5) * sy), .clamp)
                for c in 0 ..< 4 { out.pixels[(j * w + i) * 4 + c] = UInt8(v[c].rounded()) }
            }
        }
        return out
    }
}
