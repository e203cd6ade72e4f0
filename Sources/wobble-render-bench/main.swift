// Renderer benchmark (Scripts/bench-render.sh): a 1280x720 picture with four
// wobbling regions (each a tenth of the image, all moving), rendered by the
// GLES backend mid-cycle and at cycle boundaries (every region with a new
// amplitude every frame), pinned (pin = "bottom") and as a looping spring
// scene, against a plain full-image copy through the same FBO and
// read-back, plus the CPU reference on the same scene.
//
// With --clip: instead, a 90-frame clip of the four regions (a spring
// scene, 30 fps) streamed through `RegionFrames` region-only and with whole
// frames, against the same clip with no region, with wobble.frag's switches
// tested per fragment (the shader before its variants), and against the
// floor (the same boxes with no region: the still copied in, or drawn by
// the still pass, and read back): wall and CPU ms per frame (medians of
// interleaved rounds) and bytes read back per frame.
//
// Usage: wobble-render-bench [--frames N] [--width W] [--height H] [--dump DIR] [--clip]
import Foundation
import WobbleSystem
import WobbleCore
import WobbleRender

var frames = 60
var width = 1280, height = 720
var dumpDir: String?
var clipMode = false
var args = CommandLine.arguments.dropFirst()
while let a = args.popFirst() {
    switch a {
    case "--frames": frames = Int(args.popFirst() ?? "") ?? frames
    case "--width": width = Int(args.popFirst() ?? "") ?? width
    case "--height": height = Int(args.popFirst() ?? "") ?? height
    case "--dump": dumpDir = args.popFirst()
    case "--clip": clipMode = true
    default:
        Messages.writeStderr("usage: wobble-render-bench [--frames N] [--width W] [--height H] [--dump DIR] [--clip]\n")
        ThisProcess.exit(2)
    }
}

/// A photo-like test picture: smooth gradients, a checker, some noise.
func picture(_ w: Int, _ h: Int) -> RGBAImage {
    var px = [UInt8](repeating: 255, count: w * h * 4)
    var s: UInt32 = 12345
    for y in 0 ..< h {
        for x in 0 ..< w {
            s = s &* 1_664_525 &+ 1_013_904_223
            let i = (y * w + x) * 4
            let checker = ((x / 40) + (y / 40)) % 2 == 0
            px[i] = UInt8(x * 255 / (w - 1))
            px[i + 1] = UInt8(y * 255 / (h - 1))
            px[i + 2] = checker ? 220 : UInt8(s >> 26)
        }
    }
    return RGBAImage(width: w, height: h, pixels: px)
}

/// Four regions, one per quadrant, each with a bbox of a tenth of the image.
func shapes(_ w: Int, _ h: Int) -> [RegionShape] {
    let bw = Double(w) * 0.3, bh = Double(h) / 3   // 0.3 * 1/3 = 1/10 of the area
    return (0 ..< 4).map { k in
        let x = Double(w) * (k % 2 == 0 ? 0.1 : 0.6) + Double(k) * 3.3
        let y = Double(h) * (k < 2 ? 0.1 : 0.55) + Double(k) * 1.7
        let skew = Double(k) * 6
        return RegionShape(lt: Point(x + skew, y), rt: Point(x + bw, y + skew), rb: Point(x + bw - skew, y + bh),
                           lb: Point(x, y + bh - skew), center: Point(x + bw / 2, y + bh / 2))
    }
}

/// Four regions that overlap pairwise (each a tenth of the image, shifted
/// so that neighbours share about a third of their box): for sum vs first.
func overlappingShapes(_ w: Int, _ h: Int) -> [RegionShape] {
    let bw = Double(w) * 0.3, bh = Double(h) / 3
    return (0 ..< 4).map { k in
        let x = Double(w) * (0.2 + 0.2 * Double(k % 2)) + Double(k) * 2.1
        let y = Double(h) * (0.2 + 0.22 * Double(k / 2)) + Double(k) * 1.3
        return RegionShape(lt: Point(x, y), rt: Point(x + bw, y + 4), rb: Point(x + bw - 5, y + bh),
                           lb: Point(x + 3, y + bh - 2), center: Point(x + bw / 2, y + bh / 2))
    }
}

/// The frame at `t` of springs: two kicks each (staggered), so the swing is a sum.
func springFrame(_ shapes: [RegionShape], t: Double, overlap: OverlapMode = .sum) -> FrameState {
    let dirs = [Point(1, 0), Point(0, 1), Point(-0.6, 0.8), Point(0.8, -0.6)]
    let model = WobbleParameters.spring.model
    let regions = shapes.enumerated().compactMap { k, shape -> RegionFrame? in
        var kicks: [Impulse] = []
        for (dt, d) in [(0.0, dirs[k]), (0.15, dirs[(k + 1) % 4])] {
            kicks = model.adding(Impulse(start: Double(k) * 0.05 + dt, direction: d, amplitude: 1), to: kicks)
        }
        let r = model.reading(kicks, at: t, preparedAt: 0)
        let peak = shape.maxDisplacement(amplitude: r.level)
        return peak > 0 && r.swing != 0 ? RegionFrame(shape: shape, peak: peak, direction: r.offsetDirection, swing: r.swing) : nil
    }
    return FrameState(index: 0, time: t, regions: regions, overlay: [], overlayOn: false, overlap: overlap)
}

/// The frame at `t`: four impulses staggered by 50 ms (0.2 s < τ < 0.45 s
/// for t in [0.35, 0.45]).
func frame(_ shapes: [RegionShape], t: Double, amplitude: Double = 1, overlap: OverlapMode = .sum,
           pin: PinSide? = nil) -> FrameState {
    let dirs = [Point(1, 0), Point(0, 1), Point(-0.6, 0.8), Point(0.8, -0.6)]
    let regions = shapes.enumerated().compactMap { k, shape -> RegionFrame? in
        let imp = Impulse(start: Double(k) * 0.05, direction: dirs[k], amplitude: amplitude)
        let r = WobbleParameters.original.model.reading([imp], at: t, preparedAt: 0)
        let peak = shape.maxDisplacement(amplitude: r.level)
        return peak > 0 && r.swing != 0
            ? RegionFrame(shape: shape, peak: peak, direction: r.offsetDirection, swing: r.swing, pin: pin) : nil
    }
    return FrameState(index: 0, time: t, regions: regions, overlay: [], overlayOn: false, overlap: overlap)
}

/// The frame at `t` of a looping spring scene (`loop()`, period 2 s): each
/// region kicked twice a period, read in closed form from the steady state.
func loopFrame(_ shapes: [RegionShape], t: Double) -> FrameState {
    let dirs = [Point(1, 0), Point(0, 1), Point(-0.6, 0.8), Point(0.8, -0.6)]
    let regions = shapes.enumerated().compactMap { k, shape -> RegionFrame? in
        let kicks = [Impulse(start: Double(k) * 0.05, direction: dirs[k], amplitude: 1),
                     Impulse(start: 1 + Double(k) * 0.05, direction: dirs[(k + 1) % 4], amplitude: 0.8)]
        let r = LoopedMotion(parameters: .spring, period: 2, kicks: kicks).reading(at: t)
        let peak = shape.maxDisplacement(amplitude: r.level)
        return peak > 0 && r.swing != 0 ? RegionFrame(shape: shape, peak: peak, direction: r.offsetDirection, swing: r.swing) : nil
    }
    return FrameState(index: 0, time: t, regions: regions, overlay: [], overlayOn: false)
}

/// A frame at a cycle boundary: every region 0.1 s into its second cycle
/// (after the first decay) with an amplitude never seen before (`k`-th
/// frame), so every region's peak M is new, as when cycles start.
func boundaryFrame(_ shapes: [RegionShape], k: Int) -> FrameState {
    let f = frame(shapes, t: 1.2 + 0.25, amplitude: 1 + Double(k + 1) * 0.001)
    precondition(f.regions.count == 4)
    return f
}

func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    return s.isEmpty ? .nan : (s[(s.count - 1) / 2] + s[s.count / 2]) / 2
}

/// Milliseconds per call of `body`, `n` times.
func time(_ n: Int, _ body: (Int) throws -> Void) rethrows -> [Double] {
    var out: [Double] = []
    for k in 0 ..< n {
        let t0 = monotonic()
        try body(k)
        out.append((monotonic() - t0) * 1e3)
    }
    return out
}

func dump(_ image: RGBAImage, _ name: String, into dir: String) {
    try? FileSystem.makeFolders(dir)
    var data = Data("P7\nWIDTH \(image.width)\nHEIGHT \(image.height)\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n".utf8)
    data.append(contentsOf: image.pixels)
    let path = "\(dir)/\(name).pam"
    try? AtomicFile.write(Array(data), to: path)
    print("wrote \(path)")
}

let source = picture(width, height)
let regionShapes = shapes(width, height)
let gles: GLESRenderer
do {
    gles = try GLESRenderer(source: source)
} catch {
    Messages.writeStderr("wobble-render-bench: \(error)\n")
    ThisProcess.exit(1)
}
print("GLES: \(gles.platformDescription)")
print("scene: \(width)x\(height), 4 regions, bbox each \(String(format: "%.1f", 100 * regionShapes[0].bbox.width * regionShapes[0].bbox.height / Double(width * height)))% of the image; \(frames) frames per measurement")
if clipMode {
    // 90 frames at 30 fps of the spring scene (the four regions kicked
    // twice, staggered), and the same clip with nothing moving.
    let clip = (0 ..< 90).map { k in springFrame(regionShapes, t: 0.05 + Double(k) / 30) }
    let still = (0 ..< 90).map { k in FrameState(index: k, time: Double(k) / 30, regions: []) }
    // The same renderer's shader as it was before its variants (the
    // overlay and mirror switches tested per fragment, no interior or
    // opaque variant): the same bytes, for the before/after figure.
    let uniformSwitches = try GLESRenderer(source: source)
    uniformSwitches.fixedSwitches = false
    /// Wall and CPU (the process's, llvmpipe's threads included) ms per
    /// state of `body` over `states`.
    func timed<T>(_ states: [T], _ body: (T) throws -> Void) rethrows -> (wall: Double, cpu: Double) {
        func cpuNow() -> Double { processCPUTime() * 1e3 }
        let t0 = monotonic(), c0 = cpuNow()
        for s in states { try body(s) }
        let n = Double(states.count)
        return ((monotonic() - t0) * 1e3 / n, (cpuNow() - c0) / n)
    }
    func stream(_ states: [FrameState], whole: Bool, renderer: GLESRenderer = gles) throws
        -> (wall: Double, cpu: Double, bytes: Double) {
        let frames = RegionFrames(renderer: renderer, wholeFrames: whole)
        _ = try frames.still()
        let before = renderer.bytesReadBack
        let t = try timed(states) { _ = try frames.next($0) }
        return (t.wall, t.cpu, Double(renderer.bytesReadBack - before) / Double(states.count))
    }
    // The floor: the same boxes each frame with no region drawn, read back
    // (what a frame of these boxes costs before any wobble): the still
    // copied in, or drawn by the still pass.
    let clipBoxes = clip.map { FrameDamage.boxes($0, mapping: gles.mapping) }
    var floorImage = try gles.render(still[0])
    func floor(shaded: Bool) throws -> (wall: Double, cpu: Double) {
        try timed(clipBoxes) { try gles.renderFloor(boxes: $0, into: &floorImage, shaded: shaded) }
    }
    _ = try stream(clip, whole: false)   // geometry textures, shaders
    _ = try stream(clip, whole: false, renderer: uniformSwitches)
    _ = try floor(shaded: true)
    let rows = ["region-only", "region-only, switches per fragment (before the variants)", "whole frames", "no region",
                "floor: the boxes copied (blit), read back", "floor: the boxes drawn by the still pass, read back"]
    var wall = [[Double]](repeating: [], count: rows.count), cpu = wall
    var bytes = [Double](repeating: 0, count: rows.count)
    let rounds = 7
    for _ in 0 ..< rounds {
        let runs: [() throws -> (wall: Double, cpu: Double, bytes: Double)] = [
            { try stream(clip, whole: false) },
            { try stream(clip, whole: false, renderer: uniformSwitches) },
            { try stream(clip, whole: true) },
            { try stream(still, whole: false) },
            { let t = try floor(shaded: false); return (t.wall, t.cpu, 0) },
            { let t = try floor(shaded: true); return (t.wall, t.cpu, 0) },
        ]
        for (k, run) in runs.enumerated() {
            let r = try run()
            wall[k].append(r.wall)
            cpu[k].append(r.cpu)
            bytes[k] = r.bytes
        }
    }
    let moving = clip.filter { !$0.regions.isEmpty }.count
    print("clip: 90 frames (\(moving) with regions moving), medians of \(rounds) interleaved rounds")
    func padded(_ s: String) -> String { s.padding(toLength: 58, withPad: " ", startingAt: 0) }
    print("  " + padded("per frame") + "  wall ms   cpu ms  bytes read back")
    for (k, row) in rows.enumerated() {
        print("  " + padded(row) + String(format: " %8.2f %8.2f %12.0f", median(wall[k]), median(cpu[k]),
                                              k >= 4 ? bytes[0] : bytes[k]))
    }
    let (r, u, w, blit, pass) = (median(wall[0]), median(wall[1]), median(wall[2]), median(wall[4]), median(wall[5]))
    print(String(format: "  region-only / whole %.2f; region-only / switches per fragment %.2f wall, %.2f cpu",
                 r / w, r / u, median(cpu[0]) / median(cpu[1])))
    print(String(format: "  the wobble's own cost (region-only - blit floor): %.2f ms wall, %.2f ms cpu (before the variants %.2f, %.2f)",
                 r - blit, median(cpu[0]) - median(cpu[4]), u - blit, median(cpu[1]) - median(cpu[4])))
    print(String(format: "  region-only / still-pass floor %.2f wall, %.2f cpu", r / pass, median(cpu[0]) / median(cpu[5])))
    ThisProcess.exit(0)
}

let times = (0 ..< frames).map { 0.35 + 0.1 * Double($0) / Double(max(frames - 1, 1)) }
precondition(frame(regionShapes, t: times[0]).regions.count == 4)

// Warm up (shader compilation in the driver, geometry textures).
for k in 0 ..< 5 {
    _ = try gles.renderStill()
    _ = try gles.render(frame(regionShapes, t: times[k % times.count]))
}
var copyMs: [Double] = [], wobbleMs: [Double] = [], stillMs: [Double] = [], boundaryMs: [Double] = []
var springMs: [Double] = [], sumMs: [Double] = [], firstMs: [Double] = [], pinMs: [Double] = [], loopMs: [Double] = []
let overlapping = overlappingShapes(width, height)
let springFrames = (0 ..< frames / 2).map { k in springFrame(regionShapes, t: times[k * 2 % times.count]) }
let sumFrames = (0 ..< frames / 2).map { k in frame(overlapping, t: times[k * 2 % times.count], overlap: .sum) }
let firstFrames = (0 ..< frames / 2).map { k in frame(overlapping, t: times[k * 2 % times.count], overlap: .first) }
precondition(springFrames[0].regions.count == 4 && sumFrames[0].regions.count == 4)
let pinFrames = (0 ..< frames / 2).map { k in frame(regionShapes, t: times[k * 2 % times.count], pin: .bottom) }
let loopFrames = (0 ..< frames / 2).map { k in loopFrame(regionShapes, t: 2 * Double(k) / Double(max(frames / 2, 1))) }
precondition(pinFrames[0].regions.count == 4 && loopFrames.allSatisfy { $0.regions.count == 4 })
for f in [springFrames[0], sumFrames[0], firstFrames[0], pinFrames[0]] { _ = try gles.render(f) }   // their geometry
let still = FrameState(index: 0, time: 0, regions: [], overlay: [], overlayOn: false)
// Frame states are made before timing (the renderer's work only).
let midFrames = (0 ..< frames / 2).map { k in frame(regionShapes, t: times[k * 2 % times.count]) }
var boundaryFrames: [[FrameState]] = []
for round in 0 ..< 2 {   // interleaved rounds, against drift in a shared machine
    let bf = (0 ..< frames / 2).map { k in boundaryFrame(regionShapes, k: round * frames + k) }
    boundaryFrames.append(bf)
    copyMs += try time(frames / 2) { _ in _ = try gles.renderStill() }
    wobbleMs += try time(frames / 2) { k in _ = try gles.render(midFrames[k]) }
    boundaryMs += try time(frames / 2) { k in _ = try gles.render(bf[k]) }
    stillMs += try time(frames / 2) { _ in _ = try gles.render(still) }
    springMs += try time(frames / 2) { k in _ = try gles.render(springFrames[k]) }
    sumMs += try time(frames / 2) { k in _ = try gles.render(sumFrames[k]) }
    firstMs += try time(frames / 2) { k in _ = try gles.render(firstFrames[k]) }
    pinMs += try time(frames / 2) { k in _ = try gles.render(pinFrames[k]) }
    loopMs += try time(frames / 2) { k in _ = try gles.render(loopFrames[k]) }
}
// Pin against bulge in pairs (the same frame both ways, one after the
// other), so that the load of a shared machine cancels in each ratio.
var pinPairRatios: [Double] = []
for k in 0 ..< frames {
    let bulge = try time(1) { _ in _ = try gles.render(midFrames[k % midFrames.count]) }[0]
    let pinned = try time(1) { _ in _ = try gles.render(pinFrames[k % pinFrames.count]) }[0]
    pinPairRatios.append(pinned / bulge)
}
// The loop's steady state in closed form, per frame (no rendering).
let loopStateMs = time(frames) { k in _ = loopFrame(regionShapes, t: 2 * Double(k) / Double(frames)) }
// The downscaled path: the same scene at half the size (area-filtered source).
let smallW = width / 2, smallH = height / 2
let small = try GLESRenderer(source: source, outputWidth: smallW, outputHeight: smallH)
for k in 0 ..< 5 { _ = try small.renderStill(); _ = try small.render(midFrames[k % midFrames.count]) }
var smallCopyMs: [Double] = [], smallWobbleMs: [Double] = []
for _ in 0 ..< 2 {
    smallCopyMs += try time(frames / 2) { _ in _ = try small.renderStill() }
    smallWobbleMs += try time(frames / 2) { k in _ = try small.render(midFrames[k]) }
}
// The first frame of new shapes: their geometry is computed (once per shape).
let newShapeMs = try time(3) { k in
    let moved = regionShapes.map { s in
        let d = Point(Double(k + 1) * 0.37, Double(k + 1) * 0.21)
        return RegionShape(lt: s.lt + d, rt: s.rt + d, rb: s.rb + d, lb: s.lb + d, center: s.center + d)
    }
    _ = try gles.render(frame(moved, t: 0.4))
}
let cpu = CPURenderer(source: source)
let cpuMs = try time(max(3, frames / 10)) { k in _ = try cpu.render(frame(regionShapes, t: times[k % times.count])) }

let copyMedian = median(copyMs), wobbleMedian = median(wobbleMs), boundaryMedian = median(boundaryMs)
print(String(format: "plain copy (GLES, full pass + glReadPixels): median %.2f ms/frame", copyMedian))
print(String(format: "wobble     (GLES, 4 regions, mid-cycle):     median %.2f ms/frame", wobbleMedian))
print(String(format: "wobble     (GLES, 4 regions, cycle boundary, new M every frame): median %.2f ms/frame", boundaryMedian))
print(String(format: "ratio wobble / plain copy: mid-cycle %.2f, cycle boundary %.2f  (goal <= 1.5)",
             wobbleMedian / copyMedian, boundaryMedian / copyMedian))
print(String(format: "still frame (GLES render with no regions: blit + glReadPixels): median %.2f ms/frame", median(stillMs)))
print(String(format: "spring     (GLES, 4 regions, two kicks each):  median %.2f ms/frame, ratio %.2f",
             median(springMs), median(springMs) / copyMedian))
print(String(format: "pinned     (GLES, 4 regions, pin = \"bottom\", mid-cycle): median %.2f ms/frame, ratio %.2f; pin / bulge %.2f, median of %d back-to-back pairs %.2f (goal <= 1.1)",
             median(pinMs), median(pinMs) / copyMedian, median(pinMs) / wobbleMedian, pinPairRatios.count, median(pinPairRatios)))
print(String(format: "loop()     (GLES, 4 springs, steady state):    median %.2f ms/frame, ratio %.2f; the steady state itself %.4f ms/frame",
             median(loopMs), median(loopMs) / copyMedian, median(loopStateMs)))
print(String(format: "overlapping regions, overlap(\"sum\"):       median %.2f ms/frame, ratio %.2f",
             median(sumMs), median(sumMs) / copyMedian))
print(String(format: "overlapping regions, overlap(\"first\"):     median %.2f ms/frame, ratio %.2f",
             median(firstMs), median(firstMs) / copyMedian))
print(String(format: "downscaled %dx%d: copy %.2f ms, wobble %.2f ms/frame, ratio %.2f", smallW, smallH,
             median(smallCopyMs), median(smallWobbleMs), median(smallWobbleMs) / median(smallCopyMs)))
print(String(format: "first frame of 4 new shapes (geometry computed once per shape): median %.2f ms/frame", median(newShapeMs)))
print(String(format: "CPU reference, same scene:                   median %.2f ms/frame", median(cpuMs)))

if let dir = dumpDir {
    let f = frame(regionShapes, t: 0.45)
    dump(try gles.render(f), "bench-gles", into: dir)
    dump(try cpu.render(f), "bench-cpu", into: dir)
    let b = boundaryFrame(regionShapes, k: 0)
    dump(try gles.render(b), "bench-boundary-gles", into: dir)
    dump(try cpu.render(b), "bench-boundary-cpu", into: dir)
    dump(source, "bench-still", into: dir)
}
