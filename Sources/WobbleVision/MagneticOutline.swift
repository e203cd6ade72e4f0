internal import CWobbleVision
import WobbleCore

extension OpenCV {
    /// `wobble_magnetic_outline` on `rgb` (`width × height`, 3 bytes a
    /// pixel) through `anchors` (pixels): the outline's pixels and the
    /// filled mask (255 inside, one byte a pixel).
    static func magneticOutline(rgb: [UInt8], width: Int, height: Int, anchors: [(Int, Int)], margin: Int) throws
        -> (path: [(Int, Int)], mask: [UInt8]) {
        precondition(rgb.count == width * height * 3)
        let flat = anchors.flatMap { [Int32($0.0), Int32($0.1)] }
        var capacity = 4 * (width + height) + 64
        while true {
            var path = [Int32](repeating: 0, count: 2 * capacity)
            var mask = [UInt8](repeating: 0, count: width * height)
            var count: Int32 = 0
            try rgb.withUnsafeBufferPointer { image in
                try flat.withUnsafeBufferPointer { a in
                    try path.withUnsafeMutableBufferPointer { p in
                        try mask.withUnsafeMutableBufferPointer { m in
                            try check("wobble_magnetic_outline") { error, size in
                                wobble_magnetic_outline(image.baseAddress, Int32(width), Int32(height), width * 3, a.baseAddress,
                                                        Int32(anchors.count), Int32(margin), p.baseAddress, Int32(capacity), &count,
                                                        m.baseAddress, error, size)
                            }
                        }
                    }
                }
            }
            if Int(count) <= capacity {
                return ((0 ..< Int(count)).map { (Int(path[2 * $0]), Int(path[2 * $0 + 1])) }, mask)
            }
            capacity = Int(count)
        }
    }
}

extension CutoutVision {
    /// How far (pixels, at least) around the points the magnetic outline
    /// looks for the edge: this share of the points' box's longer side.
    public static let outlineMargin = 0.1
    /// How far (pixels) from a magnetic outline's path its matte may solve
    /// the rim: a soft edge's width, not more.
    public static let outlineRim = 2

    /// The magnetic outline: a closed path through `points` (image pixels,
    /// clicked along an object's edge, at least 3) whose every piece
    /// between two points follows the strongest edge between them (OpenCV's
    /// intelligent scissors: Canny edges, gradient magnitude and direction),
    /// searched in the points' box grown by `outlineMargin` of its longer
    /// side (at least 8 pixels); and the mask it closes (255 inside and on
    /// the path, 0 elsewhere), matted (`matte(image:mask:)`: the edge's
    /// band solved, a soft matte as `"auto"`'s). The path in pixel
    /// centres, in order.
    /// Deterministic. Throws `CutoutProblem`: fewer than 3 points or one
    /// outside the image, a uniform box, OpenCV's failure.
    public static func magneticOutline(image: RGBAImage, points: [Point]) throws -> (path: [Point], mask: GreyMask) {
        let w = image.width, h = image.height
        let anchors = points.map { p -> (Int, Int) in
            (Int(clamping: p.x, to: -1 ... w, rounding: .down), Int(clamping: p.y, to: -1 ... h, rounding: .down))
        }
        let xs = anchors.map(\.0), ys = anchors.map(\.1)
        guard let x0 = xs.min(), let x1 = xs.max(), let y0 = ys.min(), let y1 = ys.max() else { throw CutoutProblem.noObject }
        let box = PixelRect(x0: x0, y0: y0, x1: x1 + 1, y1: y1 + 1)
        guard x0 >= 0, y0 >= 0, x1 < w, y1 < h, points.allSatisfy(\.isFinite) else {
            throw CutoutProblem.outsideImage(box: box, width: w, height: h)
        }
        guard anchors.count >= 3 else { throw CutoutProblem.vision("a magnetic outline needs at least 3 points") }
        let margin = max(8, Int((outlineMargin * Double(max(box.width, box.height))).rounded(.up)))
        let crop = PixelRect(x0: max(0, x0 - margin), y0: max(0, y0 - margin), x1: min(w, x1 + 1 + margin), y1: min(h, y1 + 1 + margin))
        if isUniform(image, crop) { throw CutoutProblem.uniform }
        let rgb = workingRGB(image, crop, factor: 1, width: crop.width, height: crop.height)
        let found: (path: [(Int, Int)], mask: [UInt8])
        do {
            found = try OpenCV.magneticOutline(rgb: rgb, width: crop.width, height: crop.height,
                                               anchors: anchors.map { ($0.0 - crop.x0, $0.1 - crop.y0) }, margin: margin)
        } catch let e as VisionError {
            throw CutoutProblem.vision(e.message)
        }
        var mask = GreyMask(width: w, height: h)
        for y in 0 ..< crop.height {
            for x in 0 ..< crop.width where found.mask[y * crop.width + x] != 0 { mask.pixels[(y + crop.y0) * w + x + crop.x0] = 255 }
        }
        guard !mask.isAllBackground else { throw CutoutProblem.noObject }
        // The outline runs along the middle of the object's edge: the half
        // of a soft or dark rim outside it would stay in the plate (a ghost
        // line where the object was) and the half inside would move with
        // the object (a doubled line). Matted, the rim's pixels are solved:
        // the object carries its share, the plate gets the background.
        // The person drew the edge: only its rim is solved, within
        // `outlineRim` pixels of the path; farther in the outline is
        // object for sure and farther out background (unconstrained, the
        // matte moved a dark side of an object that looks like its
        // background several pixels inside the path).
        let inside = interior(of: mask, in: crop, depth: outlineRim)
        var beyond = GreyMask(width: w, height: h)
        for i in beyond.pixels.indices where mask.pixels[i] <= 127 { beyond.pixels[i] = 255 }
        let outside = interior(of: beyond, in: PixelRect(x0: 0, y0: 0, x1: w, y1: h), depth: outlineRim)
        mask = try matte(image: image, mask: mask, band: matteBand(width: w, height: h), object: inside, background: outside)
        return (found.path.map { Point(Double($0.0 + crop.x0) + 0.5, Double($0.1 + crop.y0) + 0.5) }, mask)
    }
}
