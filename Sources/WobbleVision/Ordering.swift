import Foundation
import WobbleCore

/// The order of a click's candidates: each scored for how much it looks
/// like the object clicked, the best first.
extension CutoutVision {
    /// What the ordering measures of a candidate, on the grouping's grid
    /// (the picture scaled to at most `groupingSide` pixels a side).
    struct CandidateFeatures: Equatable {
        var share = 0.0        // area over the picture
        var contrast = 0.0     // mean colour difference across the boundary over the picture's mean
        var centred = 0.0      // the click's depth inside over the deepest pixel's
        var compact = 0.0      // 16 A / P², at most 1 (a square's)
        var consensus = 0.0    // mean IoU with the other candidates
        var separation = 0.0   // 1 - the colour histograms' intersection, inside against a ring around
    }

    /// The score's weights: a strong edge all along the boundary, the
    /// click deep inside, a compact shape, agreement with the other
    /// candidates, colours unlike those just around it, and a slight
    /// preference for the larger (fitted on the hand-masked set and the
    /// two-tone test picture, checked leaving one photo out: see
    /// docs/DECISIONS.md).
    static let orderWeights = (edge: 0.25, centred: 0.9, compact: 0.05, consensus: 0.2, separation: 0.15, logShare: 0.04)

    /// How much a candidate with `f` looks like the object clicked.
    static func orderScore(_ f: CandidateFeatures) -> Double {
        guard f.share > 0 else { return -.infinity }
        let w = orderWeights
        return w.edge * f.contrast / (1 + f.contrast) + w.centred * f.centred + w.compact * f.compact + w.consensus * f.consensus
            + w.separation * f.separation + w.logShare * log(max(f.share, 1e-5))
    }

    /// `masks` (a click's candidates at `point`) best score first; equal
    /// scores keep their order.
    static func ordered(_ masks: [GreyMask], image: RGBAImage, at point: Point) -> [GreyMask] {
        let scores = features(of: masks, image: image, at: point).map(orderScore)
        return masks.indices.sorted { (scores[$0], -$0) > (scores[$1], -$1) }.map { masks[$0] }
    }

    /// Each mask's `CandidateFeatures` at `point` (image pixels).
    static func features(of masks: [GreyMask], image: RGBAImage, at point: Point) -> [CandidateFeatures] {
        let w = image.width, h = image.height
        let factor = max(1, (max(w, h) + groupingSide - 1) / groupingSide)
        let lw = (w + factor - 1) / factor, lh = (h + factor - 1) / factor
        let rgb = workingRGB(image, PixelRect(x0: 0, y0: 0, x1: w, y1: h), factor: factor, width: lw, height: lh)
        let grid = Grid(rgb: rgb, width: lw, height: lh)
        let cx = min(lw - 1, Int(point.x) / factor), cy = min(lh - 1, Int(point.y) / factor)
        let downs = masks.map { grid.downscaled($0, factor: factor) }
        let n = lw * lh
        let areas = downs.map { $0.reduce(0) { $0 + ($1 ? 1 : 0) } }
        var out: [CandidateFeatures] = []
        for (k, inside) in downs.enumerated() {
            var f = CandidateFeatures()
            let area = areas[k]
            guard area > 0 else { out.append(f); continue }
            f.share = Double(area) / Double(n)
            let shape = grid.facts(inside)
            let boundary = shape.boundary, onEdge = shape.onEdge, strength = shape.strength
            let depth = shape.depth, deepest = shape.deepest
            f.contrast = boundary == 0 ? 0 : Double(strength) / Double(boundary) / grid.meanEdge
            f.centred = inside[cy * lw + cx] ? Double(depth[cy * lw + cx]) / Double(deepest) : 0
            let perimeter = Double(boundary + onEdge)
            f.compact = min(1, 16 * Double(area) / (perimeter * perimeter))
            // Consensus.
            var sum = 0.0
            for (j, other) in downs.enumerated() where j != k {
                var inter = 0, uni = 0
                for i in 0..<n { if inside[i] && other[i] { inter += 1 }; if inside[i] || other[i] { uni += 1 } }
                sum += uni == 0 ? 0 : Double(inter) / Double(uni)
            }
            f.consensus = downs.count > 1 ? sum / Double(downs.count - 1) : 0
            // Colour separation: inside against a ring around it.
            if let sep = colourSeparation(inside: inside, rgb: rgb, width: lw, height: lh, area: area) { f.separation = sep }
            out.append(f)
        }
        return out
    }
}

extension CutoutVision {
    /// 1 − the intersection of two colour histograms (8 bins a channel):
    /// the cells `inside`, against a ring around them grown by a quarter of
    /// √`area` (at least 2 cells), on a `width × height` grid of RGB cells.
    /// Nil when the ring is empty (the cells fill the grid).
    static func colourSeparation(inside: [Bool], rgb: [UInt8], width lw: Int, height lh: Int, area: Int) -> Double? {
        let n = lw * lh
        let grow = max(2, Int((Double(area).squareRoot() / 4).rounded()))
        var dist = [Int32](repeating: -1, count: n)
        var q: [Int] = []
        for i in 0 ..< n where inside[i] { dist[i] = 0; q.append(i) }
        var hd = 0
        while hd < q.count {
            let i = q[hd]; hd += 1
            guard dist[i] < grow else { continue }
            let x = i % lw, y = i / lw
            for (nx, ny) in [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)] where nx >= 0 && ny >= 0 && nx < lw && ny < lh {
                let j = ny * lw + nx
                if dist[j] < 0 { dist[j] = dist[i] + 1; q.append(j) }
            }
        }
        let bins = 8
        var hi = [Int](repeating: 0, count: bins * bins * bins), ho = hi
        var ni = 0, no = 0
        for i in 0 ..< n where dist[i] >= 0 {
            let b = (Int(rgb[i * 3]) * bins / 256) * bins * bins + (Int(rgb[i * 3 + 1]) * bins / 256) * bins + Int(rgb[i * 3 + 2]) * bins / 256
            if dist[i] == 0 { hi[b] += 1; ni += 1 } else { ho[b] += 1; no += 1 }
        }
        guard no > 0 else { return nil }
        var inter = 0.0
        for b in hi.indices { inter += min(Double(hi[b]) / Double(ni), Double(ho[b]) / Double(no)) }
        return 1 - inter
    }
}
