import Foundation
import WobbleSystem

/// The still's remap to its palette: Floyd–Steinberg error diffusion that
/// dithers fully in smooth areas and little on edges and in noise, where
/// dithering only adds grain (and bytes).
///
/// How much each pixel is dithered comes from two maps:
/// - the **edge map** (`edgeMap`), from the still alone: each pixel's second
///   differences across and down (the larger per channel, on values raised
///   to the power 1.21 as the quantiser sees them, weighted by
///   `edgeStrength`); a strong one is an edge
///   (little dithering); where both directions are strong at once the area
///   is noise (texture), which is spread a little and smoothed, and dithers
///   little too;
/// - the **runs** of the still mapped to the nearest colours without
///   dithering: a pixel in a long run of one colour whose rows above and
///   below share it is in a flat area that bands without dithering; a
///   pixel whose nearest colour changes at every step needs none.
///
/// The diffusion runs in serpentine rows over each band of rows on its own
/// (the bands on as many threads; the same bytes whatever the cores), on
/// the working values in 0...255 (sRGB raised to the power 1.21, as the
/// quantiser measures colours): error that would push a value far past the
/// range is scaled back, an error too large for the palette to follow is
/// damped, and a tiny one is not diffused at all (no grain where the colour
/// is already right). The colour chosen is the nearest in sRGB (what the
/// eye and PSNR see). Transparent pixels take the reserved index and pass
/// no error on.
///
/// This is the remap libimagequant makes at its best speeds, written here
/// because its own pass runs a second, undithered remap with a search per
/// pixel first: ours reuses each pixel's undithered colour as the first
/// guess of its dithered search (`GIFNearestColor.index(_:_:_:guess:)`).
/// On the 480×360 latte still: 8.5 ms of CPU a band against
/// libimagequant's 14, at 40.53 dB against 40.43 and 0.9% fewer bytes.
struct GIFDither {
    /// Opaque palette, `r, g, b` per colour.
    let rgb: [UInt8]
    /// The index of transparent pixels.
    let transparent: UInt8
    /// Per pixel, 0 (edge, noise) ... 255 (flat); nil: dither everywhere
    /// fully (a still under 4×4 pixels).
    let edges: [UInt8]?

    /// Error terms smaller than this (squared, in working units) are not
    /// diffused.
    static let tinyError: Float = 3
    /// The second differences' weight in the edge map. Measured against
    /// libimagequant's own remap on the gallery's photos (one frame each:
    /// the latte at 480×360 and 600×400, the cat, purr, the sticker): at
    /// 1 (and an error threshold of 2) this remap dithered more, 0.04–0.14
    /// dB lower and 0.5–1.3% larger, its grain showing in the cat's iris at
    /// 4× zoom; at 6 (threshold 3) the same PSNR or up to 0.1 dB better
    /// and bytes within 0.05% or fewer, the iris and the cup's smooth
    /// inside looking as libimagequant's.
    static let edgeStrength: Float = 6
    /// Errors past this (squared) are damped at the least; a band whose
    /// undithered remap is far from its pixels on average allows more.
    static let largeError: Float = 64 * 64
    /// How far past 0...255 a dithered value may go (values beyond are
    /// scaled back; a little overflow keeps clipped bands dithered).
    static let overflow: Float = 25.5

    /// Each pixel's edge map value (see the type's summary) for RGBA
    /// pixels with alpha 0 or 255; nil for a still under 4×4.
    static func edgeMap(_ px: UnsafeRawBufferPointer, width w: Int, height h: Int) -> [UInt8]? {
        guard w >= 4, h >= 4, px.count >= w * h * 4 else { return nil }
        let n = w * h
        var noise = [UInt8](repeating: 0, count: n)
        var edges = [UInt8](repeating: 0, count: n)
        // Three rows (above, at, below) of four planes (r, g, b
        // premultiplied by alpha, and alpha), each `w + 2` long: the row's
        // first and last values repeated at its ends.
        let stride = w + 2
        let planes = UnsafeMutablePointer<Float>.allocate(capacity: 3 * 4 * stride)
        defer { planes.deallocate() }
        let src = px.baseAddress!.assumingMemoryBound(to: UInt8.self)
        GIFDither.level.withUnsafeBufferPointer { level in
            func load(_ y: Int, into slot: Int) {
                let row = src + y * w * 4
                for c in 0..<4 {
                    let dst = planes + (slot * 4 + c) * stride
                    if c == 3 {
                        for i in 0..<w { dst[i + 1] = row[i * 4 + 3] >= 128 ? 1 : 0 }
                    } else {
                        for i in 0..<w { dst[i + 1] = row[i * 4 + 3] >= 128 ? level[Int(row[i * 4 + c])] : 0 }
                    }
                    dst[0] = dst[1]
                    dst[w + 1] = dst[w]
                }
            }
            load(0, into: 0)
            load(0, into: 1)
            load(1, into: 2)
            var slots = (0, 1, 2)
            for y in 0..<h {
                if y > 0 {
                    slots = (slots.1, slots.2, slots.0)
                    load(min(y + 1, h - 1), into: slots.2)
                }
                var horiz = [Float](repeating: 0, count: w), vert = [Float](repeating: 0, count: w)
                for c in 0..<4 {
                    let u = planes + (slots.0 * 4 + c) * stride + 1, m = planes + (slots.1 * 4 + c) * stride + 1
                    let d = planes + (slots.2 * 4 + c) * stride + 1
                    for x in 0..<w {
                        horiz[x] = max(horiz[x], abs(m[x - 1] + m[x + 1] - 2 * m[x]))
                        vert[x] = max(vert[x], abs(u[x] + d[x] - 2 * m[x]))
                    }
                }
                for x in 0..<w {
                    let hz = horiz[x] * GIFDither.edgeStrength, vt = vert[x] * GIFDither.edgeStrength
                    let edge = max(hz, vt)
                    var z = 1 - max(edge - abs(hz - vt) * 0.5, min(hz, vt))
                    z *= z
                    z *= z
                    noise[y * w + x] = UInt8(min(85 + max(0, z) * 171, 255))
                    edges[y * w + x] = UInt8(max(0, min(255 - edge * 256, 255)))
                }
            }
        }
        // Noise: thin lines dropped (spread, smoothed), then shrunk back.
        var tmp = [UInt8](repeating: 0, count: n)
        spread(noise, into: &tmp, w, h, larger: true)
        spread(tmp, into: &noise, w, h, larger: true)
        boxBlur(&noise, &tmp, w, h, radius: 3)
        spread(noise, into: &tmp, w, h, larger: true)
        spread(tmp, into: &noise, w, h, larger: false)
        spread(noise, into: &tmp, w, h, larger: false)
        spread(tmp, into: &noise, w, h, larger: false)
        // Edges: single pixels dropped.
        spread(edges, into: &tmp, w, h, larger: false)
        spread(tmp, into: &edges, w, h, larger: true)
        for i in 0..<n { edges[i] = min(noise[i], edges[i]) }
        return edges
    }

    /// sRGB byte to the quantiser's working value (power 1.21, 0...1).
    static let level: [Float] = (0..<256).map { Float(pow(Double($0) / 255, 0.5499 / 0.45455)) }
    /// The working value in 0...255 (what the diffusion adds errors to).
    static let working: [Float] = level.map { $0 * 255 }
    /// A working value in 0...255, in 4,096 steps, back to the sRGB byte.
    static let inverse: [UInt8] = (0..<4096).map { UInt8((pow(Double($0) / 4095, 0.45455 / 0.5499) * 255).rounded()) }

    /// The larger (or smaller) of each pixel and its four neighbours (the
    /// picture's edge repeated); at least 2×2.
    static func spread(_ src: [UInt8], into dst: inout [UInt8], _ w: Int, _ h: Int, larger: Bool) {
        src.withUnsafeBufferPointer { s in
            dst.withUnsafeMutableBufferPointer { d in
                @inline(__always) func pick(_ a: UInt8, _ b: UInt8) -> UInt8 { larger ? max(a, b) : min(a, b) }
                for y in 0..<h {
                    let m = s.baseAddress! + y * w, u = s.baseAddress! + max(y - 1, 0) * w
                    let dn = s.baseAddress! + min(y + 1, h - 1) * w, o = d.baseAddress! + y * w
                    o[0] = pick(pick(pick(m[0], m[1]), pick(u[0], dn[0])), m[0])
                    if larger {
                        for x in 1..<(w - 1) { o[x] = max(max(max(m[x - 1], m[x + 1]), max(u[x], dn[x])), m[x]) }
                    } else {
                        for x in 1..<(w - 1) { o[x] = min(min(min(m[x - 1], m[x + 1]), min(u[x], dn[x])), m[x]) }
                    }
                    o[w - 1] = pick(pick(pick(m[w - 2], m[w - 1]), pick(u[w - 1], dn[w - 1])), m[w - 1])
                }
            }
        }
    }

    /// A box blur `2 radius + 1` wide, across then down (the picture's edge
    /// repeated); `tmp` is scratch of the same size.
    static func boxBlur(_ a: inout [UInt8], _ tmp: inout [UInt8], _ w: Int, _ h: Int, radius: Int) {
        let span = UInt32(2 * radius + 1)
        a.withUnsafeMutableBufferPointer { a in
            tmp.withUnsafeMutableBufferPointer { t in
                for y in 0..<h {
                    let row = y * w
                    var sum = 0
                    for k in -radius...radius { sum += Int(a[row + min(max(k, 0), w - 1)]) }
                    for x in 0..<w {
                        t[row + x] = UInt8(sum / Int(span))
                        sum += Int(a[row + min(x + radius + 1, w - 1)]) - Int(a[row + max(x - radius, 0)])
                    }
                }
                // Down: a running sum per column, a row at a time.
                var sums = [UInt32](repeating: 0, count: w)
                sums.withUnsafeMutableBufferPointer { sums in
                    for k in -radius...radius {
                        let row = t.baseAddress! + min(max(k, 0), h - 1) * w
                        for x in 0..<w { sums[x] += UInt32(row[x]) }
                    }
                    for y in 0..<h {
                        let out = a.baseAddress! + y * w
                        for x in 0..<w { out[x] = UInt8(sums[x] / span) }
                        let enter = t.baseAddress! + min(y + radius + 1, h - 1) * w
                        let leave = t.baseAddress! + max(y - radius, 0) * w
                        for x in 0..<w { sums[x] = sums[x] &+ UInt32(enter[x]) &- UInt32(leave[x]) }
                    }
                }
            }
        }
    }

    /// Rows `y0..<y1` of `px` (RGBA, alpha 0 or 255, `width` × `height`)
    /// mapped to the palette, dithered (`dithering` 0 ... 1): the band's
    /// indices, `width * (y1 - y0)`.
    func remap(_ px: UnsafeRawBufferPointer, width w: Int, height h: Int, rows y0: Int, _ y1: Int, dithering: Float) -> [UInt8] {
        let rows = y1 - y0
        guard rows > 0, w > 0 else { return [] }
        let src = px.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let nearest = GIFNearestColor(rgb: rgb)
        let t = transparent
        // The nearest colours, one row beyond the band each side (the runs
        // look at the rows above and below), and the band's mean squared
        // error under them.
        let h0 = max(y0 - 1, 0), h1 = min(y1 + 1, h)
        var plain = [UInt8](repeating: t, count: (h1 - h0) * w)
        let working = GIFDither.working, inverse = GIFDither.inverse
        var squared: Double = 0, opaque = 0
        plain.withUnsafeMutableBufferPointer { out in
            var last: UInt8 = 0
            for y in h0..<h1 {
                let inBand = y >= y0 && y < y1
                for x in 0..<w {
                    let p = src + (y * w + x) * 4
                    guard p[3] >= 128 else { continue }
                    let k = nearest.index(p[0], p[1], p[2], guess: last)
                    last = k
                    out[(y - h0) * w + x] = k
                    if inBand {
                        let c = Int(k) * 3
                        let dr = working[Int(p[0])] - working[Int(rgb[c])], dg = working[Int(p[1])] - working[Int(rgb[c + 1])]
                        let db = working[Int(p[2])] - working[Int(rgb[c + 2])]
                        squared += Double(dr * dr + dg * dg + db * db)
                        opaque += 1
                    }
                }
            }
        }
        let largeError = max(GIFDither.largeError, Float(2.4 * squared / Double(max(opaque, 1))))
        // How much each pixel of the band is dithered, 0 ... 1.
        let d = max(0, min(dithering, 1))
        let base = (1 - (1 - d) * (1 - d)) * 15 / 16
        var amount = [Float](repeating: base, count: rows * w)
        if let edges {
            for y in y0..<y1 {
                let row = (y - h0) * w
                let above = y > 0 ? (y - 1 - h0) * w : -1, below = y + 1 < h ? (y + 1 - h0) * w : -1
                var start = 0
                while start < w {
                    let v = plain[row + start]
                    var end = start + 1
                    while end < w && plain[row + end] == v { end += 1 }
                    var neighbours = 10 * (end - start)
                    for x in start..<end {
                        if above >= 0 && plain[above + x] == v { neighbours += 15 }
                        if below >= 0 && plain[below + x] == v { neighbours += 15 }
                    }
                    let flat = 1 - 20 / Float(20 + neighbours)
                    for x in start..<end {
                        amount[(y - y0) * w + x] = base * Float(Int(edges[y * w + x]) + 128) / 383 * flat
                    }
                    start = end
                }
            }
        }
        // Floyd–Steinberg, serpentine, errors in working units.
        var indices = [UInt8](repeating: t, count: rows * w)
        let colours = stride(from: 0, to: rgb.count - 2, by: 3)
        let pr = colours.map { working[Int(rgb[$0])] }, pg = colours.map { working[Int(rgb[$0 + 1])] }
        let pb = colours.map { working[Int(rgb[$0 + 2])] }
        var errors = [Float](repeating: 0, count: 2 * (w + 2) * 3)
        let low = -GIFDither.overflow, high = 255 + GIFDither.overflow
        indices.withUnsafeMutableBufferPointer { out in
            plain.withUnsafeBufferPointer { plain in
                errors.withUnsafeMutableBufferPointer { errs in
                    amount.withUnsafeBufferPointer { amount in
                        var this = errs.baseAddress!, next = errs.baseAddress! + (w + 2) * 3
                        for y in y0..<y1 {
                            let forward = (y - y0) % 2 == 0
                            next.update(repeating: 0, count: (w + 2) * 3)
                            for step in 0..<w {
                                let x = forward ? step : w - 1 - step
                                let p = src + (y * w + x) * 4
                                guard p[3] >= 128 else { continue }
                                let level = amount[(y - y0) * w + x]
                                let e = this + (x + 1) * 3
                                let sr = e[0] * level, sg = e[1] * level, sb = e[2] * level
                                let vr = working[Int(p[0])], vg = working[Int(p[1])], vb = working[Int(p[2])]
                                var ratio: Float = 1
                                @inline(__always) func limit(_ v: Float, _ s: Float) {
                                    if v + s > high { ratio = min(ratio, (high - v) / s) }
                                    else if v + s < low { ratio = min(ratio, (low - v) / s) }
                                }
                                limit(vr, sr); limit(vg, sg); limit(vb, sb)
                                let spread = sr * sr + sg * sg + sb * sb
                                var (dr, dg, db) = (vr, vg, vb)
                                if spread >= GIFDither.tinyError {
                                    if spread > largeError { ratio *= 0.8 }
                                    dr += sr * ratio; dg += sg * ratio; db += sb * ratio
                                }
                                @inline(__always) func byte(_ v: Float) -> UInt8 { inverse[Int(max(0, min(255, v)) * (4095 / 255) + 0.5)] }
                                let k = nearest.index(byte(dr), byte(dg), byte(db), guess: plain[(y - h0) * w + x])
                                out[(y - y0) * w + x] = k
                                var er = dr - pr[Int(k)], eg = dg - pg[Int(k)], eb = db - pb[Int(k)]
                                if er * er + eg * eg + eb * eb > largeError {
                                    er *= 0.75; eg *= 0.75; eb *= 0.75
                                }
                                // 7/16 ahead, 3/16 behind below, 5/16 below, 1/16 ahead below.
                                let ahead = forward ? x + 2 : x, behind = forward ? x : x + 2
                                this[ahead * 3] += er * (7 / 16); this[ahead * 3 + 1] += eg * (7 / 16); this[ahead * 3 + 2] += eb * (7 / 16)
                                next[behind * 3] += er * (3 / 16); next[behind * 3 + 1] += eg * (3 / 16); next[behind * 3 + 2] += eb * (3 / 16)
                                next[(x + 1) * 3] += er * (5 / 16); next[(x + 1) * 3 + 1] += eg * (5 / 16); next[(x + 1) * 3 + 2] += eb * (5 / 16)
                                next[ahead * 3] += er * (1 / 16); next[ahead * 3 + 1] += eg * (1 / 16); next[ahead * 3 + 2] += eb * (1 / 16)
                            }
                            swap(&this, &next)
                        }
                    }
                }
            }
        }
        return indices
    }
}
