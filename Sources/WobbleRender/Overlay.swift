import WobbleCore

/// Draws the control layer over a rendered frame, as the original's sketch
/// view (MFSketchView) did: for every sketch its four edges
/// LT→RT→RB→LB→LT (black lines), the Bezier boundary of the wobble model (blue),
/// the corner points (red dots) and the center (green dot).
///
/// Pure Swift and independent of the backend, so GLES and CPU frames get
/// identical overlays. Shapes are anti-aliased by coverage (a one-pixel
/// ramp at their rim) and composited "over" the straight-alpha frame, so
/// the result's alpha is at least the frame's and at least the shape's
/// coverage: an overlay drawn over transparent pixels is visible.
///
/// Sizes scale with the output: lines are `max(1.5, min(w, h) / 300)`
/// output pixels wide and dots have a radius of twice the line width.
/// Drawing order: edges, boundary, corners, center (later ones on top).
public enum OverlayPainter {
    /// Colours of the overlay's parts (RGB).
    public static let edgeColor: (UInt8, UInt8, UInt8) = (0, 0, 0)
    public static let boundaryColor: (UInt8, UInt8, UInt8) = (0, 90, 255)
    public static let cornerColor: (UInt8, UInt8, UInt8) = (255, 0, 0)
    public static let centerColor: (UInt8, UInt8, UInt8) = (0, 200, 0)

    /// Line width in output pixels for an output of `width × height`.
    public static func lineWidth(width: Int, height: Int) -> Double {
        max(1.5, Double(min(width, height)) / 300)
    }

    /// Dot radius in output pixels for an output of `width × height`.
    public static func dotRadius(width: Int, height: Int) -> Double {
        2 * lineWidth(width: width, height: height)
    }

    /// Draws `sketches` (geometry in source-image pixels) into `image`
    /// (an output frame of `mapping.outputWidth × mapping.outputHeight`).
    /// Non-finite points are skipped; shapes partly or wholly off the frame
    /// are clipped.
    public static func draw(_ sketches: [RegionShape], into image: inout RGBAImage, mapping: OutputMapping,
                            style: OverlayStyle = .sketch) {
        guard image.width > 0, image.height > 0, !sketches.isEmpty else { return }
        let lw = lineWidth(width: image.width, height: image.height)
        let radius = dotRadius(width: image.width, height: image.height)
        let sx = mapping.scaleX, sy = mapping.scaleY
        guard sx.isFinite, sy.isFinite, sx > 0, sy > 0 else { return }
        func out(_ p: Point) -> Point { Point(p.x / sx, p.y / sy) }

        for s in sketches {
            let corners = [s.lt, s.rt, s.rb, s.lb].map(out)
            // Edges.
            var edges = Layer(halfWidth: lw / 2)
            for i in 0..<4 { edges.segment(corners[i], corners[(i + 1) % 4]) }
            edges.composite(into: &image, color: style.edge)
            // Bezier boundary, as a fine polyline.
            var curve = Layer(halfWidth: lw / 2)
            for q in s.boundary {
                let p0 = out(q.p0), p1 = out(q.p1), p2 = out(q.p2)
                guard p0.isFinite, p1.isFinite, p2.isFinite else { continue }
                let length = (p1 - p0).length + (p2 - p1).length
                let n = Int(min(256, max(8, (length / 2).rounded(.up))))
                let oq = QuadraticBezier(p0, p1, p2)
                var prev = p0
                for k in 1...n {
                    let p = oq.point(at: Double(k) / Double(n))
                    curve.segment(prev, p)
                    prev = p
                }
            }
            curve.composite(into: &image, color: style.boundary)
            // Corner points.
            var dots = Layer(halfWidth: radius)
            for c in corners { dots.segment(c, c) }
            dots.composite(into: &image, color: style.corner)
            // Center.
            var center = Layer(halfWidth: radius)
            let c = out(s.center)
            center.segment(c, c)
            center.composite(into: &image, color: style.center)
        }
    }

    /// Shapes of one colour: capsules (segments with round ends; a segment
    /// from a point to itself is a dot) of one half-width. Coverage is the
    /// maximum over the shapes, so joints of a polyline are not darker.
    struct Layer {
        let halfWidth: Double
        var segments: [(Point, Point)] = []

        init(halfWidth: Double) { self.halfWidth = halfWidth }

        mutating func segment(_ a: Point, _ b: Point) {
            guard a.isFinite, b.isFinite else { return }
            segments.append((a, b))
        }

        /// Coverage of the capsule `a–b` at `p`: 1 inside, 0 farther than
        /// half a pixel outside, linear in between.
        static func coverage(_ p: Point, _ a: Point, _ b: Point, halfWidth: Double) -> Double {
            let ab = b - a, ap = p - a
            let len2 = ab.dot(ab)
            let t = len2 > 0 ? min(max(ap.dot(ab) / len2, 0), 1) : 0
            let d = (ap - ab * t).length
            return min(max(halfWidth + 0.5 - d, 0), 1)
        }

        func composite(into image: inout RGBAImage, color: (UInt8, UInt8, UInt8)) {
            guard !segments.isEmpty else { return }
            let w = image.width, h = image.height
            let reach = halfWidth + 1
            // Pixel centres (i + 0.5, j + 0.5) within reach of any segment.
            var minX = Double.infinity, minY = Double.infinity, maxX = -Double.infinity, maxY = -Double.infinity
            for (a, b) in segments {
                minX = min(minX, a.x, b.x); maxX = max(maxX, a.x, b.x)
                minY = min(minY, a.y, b.y); maxY = max(maxY, a.y, b.y)
            }
            let x0 = clampIndex(minX - reach - 0.5, w), x1 = clampIndex(maxX + reach - 0.5, w)
            let y0 = clampIndex(minY - reach - 0.5, h), y1 = clampIndex(maxY + reach - 0.5, h)
            guard x0 <= x1, y0 <= y1, maxX + reach >= 0, maxY + reach >= 0,
                  minX - reach <= Double(w), minY - reach <= Double(h) else { return }
            let bw = x1 - x0 + 1
            var cover = [Double](repeating: 0, count: bw * (y1 - y0 + 1))
            for (a, b) in segments {
                // Each segment only touches its own box.
                let sx0 = max(x0, clampIndex(min(a.x, b.x) - reach - 0.5, w))
                let sx1 = min(x1, clampIndex(max(a.x, b.x) + reach - 0.5, w))
                let sy0 = max(y0, clampIndex(min(a.y, b.y) - reach - 0.5, h))
                let sy1 = min(y1, clampIndex(max(a.y, b.y) + reach - 0.5, h))
                guard sx0 <= sx1, sy0 <= sy1 else { continue }
                for j in sy0...sy1 {
                    for i in sx0...sx1 {
                        let c = Layer.coverage(Point(Double(i) + 0.5, Double(j) + 0.5), a, b, halfWidth: halfWidth)
                        let k = (j - y0) * bw + (i - x0)
                        if c > cover[k] { cover[k] = c }
                    }
                }
            }
            let cr = Double(color.0), cg = Double(color.1), cb = Double(color.2)
            image.pixels.withUnsafeMutableBufferPointer { px in
                for j in y0...y1 {
                    for i in x0...x1 {
                        let c = cover[(j - y0) * bw + (i - x0)]
                        guard c > 0 else { continue }
                        let o = (j * w + i) * 4
                        let da = Double(px[o + 3]) / 255
                        // Straight-alpha "over": Ao = c + Ad(1 − c).
                        let ao = c + da * (1 - c)
                        let keep = da * (1 - c)
                        func mix(_ src: Double, _ dst: UInt8) -> UInt8 {
                            UInt8(min(255, max(0, ((src * c + Double(dst) * keep) / ao).rounded())))
                        }
                        px[o] = mix(cr, px[o])
                        px[o + 1] = mix(cg, px[o + 1])
                        px[o + 2] = mix(cb, px[o + 2])
                        px[o + 3] = UInt8(min(255, max(0, (ao * 255).rounded())))
                    }
                }
            }
        }

        /// `floor(v)` clamped to `0...(n - 1)` (for coordinates far off the frame).
        func clampIndex(_ v: Double, _ n: Int) -> Int {
            if !(v > 0) { return 0 }
            if v >= Double(n - 1) { return n - 1 }
            return Int(v.rounded(.down))
        }
    }
}
