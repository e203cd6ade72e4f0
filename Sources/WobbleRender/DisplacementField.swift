import Dispatch
import WobbleCore

/// The displacement magnitude `m(p)` of one region (SPEC §5) at the centre
/// of every output pixel of the region's bounding box, for one peak `M`.
///
/// `m` depends only on the shape and the peak, which change at most once per
/// cycle (the amplitude decays at cycle boundaries), so the GLES renderer
/// computes the field once and reuses it for every frame of the cycle; per
/// frame only `progress · direction` changes. It is computed in doubles with
/// `RegionShape.displacement`, the very function the CPU reference uses, so
/// both backends agree exactly on which region moves which pixel (first wins
/// on an overlap, even for pixel centres that lie on a boundary).
struct DisplacementField {
    /// The box in output pixels: columns `x0 ..< x0 + width`, rows
    /// `y0 ..< y0 + height`; empty (width 0) when no pixel moves.
    let x0: Int
    let y0: Int
    let width: Int
    let height: Int
    /// `m` per pixel of the box, rows top to bottom; 0 where the region does
    /// not move the pixel; positive values are at least the smallest normal
    /// Float, so that "moves" survives the conversion to Float exactly.
    let values: [Float]

    var isEmpty: Bool { width == 0 || height == 0 }

    init(shape: RegionShape, peak: Double, mapping m: OutputMapping) {
        let b = shape.bbox
        // The output pixels whose source point may lie in the bbox (as
        // CPURenderer bounds them); each is tested exactly below.
        let i0 = max(0, Int((b.minX / m.scaleX - 0.5).rounded(.down)))
        let i1 = min(m.outputWidth - 1, Int((b.maxX / m.scaleX - 0.5).rounded(.up)))
        let j0 = max(0, Int((b.minY / m.scaleY - 0.5).rounded(.down)))
        let j1 = min(m.outputHeight - 1, Int((b.maxY / m.scaleY - 0.5).rounded(.up)))
        guard shape.canMove, peak > 0, i0 <= i1, j0 <= j1, b.minX.isFinite, b.maxY.isFinite else {
            self.init(empty: ())
            return
        }
        let w = i1 - i0 + 1, h = j1 - j0 + 1
        var full = [Float](repeating: 0, count: w * h)
        full.withUnsafeMutableBufferPointer { buffer in
            nonisolated(unsafe) let out = buffer
            let chunks = min(h, 16)
            DispatchQueue.concurrentPerform(iterations: chunks) { c in
                for j in (h * c / chunks) ..< (h * (c + 1) / chunks) {
                    for i in 0 ..< w {
                        let p = m.sourcePoint(i0 + i, j0 + j)
                        guard p.x >= b.minX, p.x <= b.maxX, p.y >= b.minY, p.y <= b.maxY else { continue }
                        let v = shape.displacement(at: p, peak: peak)
                        if v > 0 { out[j * w + i] = max(Float(v), Float.leastNormalMagnitude) }
                    }
                }
            }
        }
        // Crop to the pixels that move.
        var minI = w, maxI = -1, minJ = h, maxJ = -1
        for j in 0 ..< h {
            for i in 0 ..< w where full[j * w + i] != 0 {
                minI = min(minI, i); maxI = max(maxI, i)
                minJ = min(minJ, j); maxJ = max(maxJ, j)
            }
        }
        guard minI <= maxI else {
            self.init(empty: ())
            return
        }
        let cw = maxI - minI + 1, ch = maxJ - minJ + 1
        var cropped = [Float]()
        cropped.reserveCapacity(cw * ch)
        for j in minJ ... maxJ { cropped.append(contentsOf: full[(j * w + minI) ... (j * w + maxI)]) }
        self.init(x0: i0 + minI, y0: j0 + minJ, width: cw, height: ch, values: cropped)
    }

    private init(x0: Int, y0: Int, width: Int, height: Int, values: [Float]) {
        self.x0 = x0
        self.y0 = y0
        self.width = width
        self.height = height
        self.values = values
    }

    private init(empty: ()) {
        self.init(x0: 0, y0: 0, width: 0, height: 0, values: [])
    }
}
