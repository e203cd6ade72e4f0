import WobbleCore

/// The PNGs most inputs are — 8-bit RGB or RGBA, not interlaced, no
/// palette, no transparency chunk, no colour chunk libpng would act on —
/// read without libpng: the chunks walked (CRC of every critical chunk
/// checked), the image data inflated a row at a time into exactly the
/// rows' bytes, and each row unfiltered here, four channels at a step,
/// straight into the picture (its only large allocation, as libpng's). libpng undoes the Paeth
/// filter a byte at a step (as Debian builds it); frames we wrote ourselves
/// are mostly Paeth rows, so reading a folder of them (`--assemble`) spent
/// a quarter of its time there. The pixels are those libpng gives (the
/// filters are exact arithmetic); anything else, and anything odd — a chunk
/// out of place, a CRC or zlib stream that does not check, data too short
/// or too long — is left to libpng, which reads it or says what is wrong.
///
/// Grey, grey with alpha, 16-bit and interlaced (Adam7) files without
/// those colour chunks are read here too, by a plainer path (`general`):
/// libpng's simplified reader (Debian's 1.6.39) gives wrong pixels on
/// every other row of a 16-bit interlaced file (the rows of its first six
/// passes), and the rest come out as it gives them: grey copied into red,
/// green and blue, a 16-bit sample `v` as `(v × 255 + 32767) / 65535`
/// (samples taken as sRGB-encoded, not as linear light).
enum PNGRows {
    /// The picture, nil where libpng must read it. `checkSize` as in
    /// `PNGCodec.decode` (its error is thrown).
    static func decode(_ data: UnsafeRawBufferPointer, checkSize: (Int, Int) throws -> Void) throws -> RGBAImage? {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        guard data.count >= 8 + 25, data.prefix(8).elementsEqual(signature) else { return nil }
        func u32(_ at: Int) -> Int { Int(data[at]) << 24 | Int(data[at + 1]) << 16 | Int(data[at + 2]) << 8 | Int(data[at + 3]) }
        func type(_ at: Int) -> UInt32 { UInt32(u32(at)) }
        let IHDR: UInt32 = 0x4948_4452, IDAT: UInt32 = 0x4944_4154, IEND: UInt32 = 0x4945_4E44
        // Chunks libpng would act on for the pixels: left to it.
        let refused: Set<UInt32> = [0x504C_5445 /* PLTE */, 0x7452_4E53 /* tRNS */, 0x6741_4D41 /* gAMA */,
                                    0x6348_524D /* cHRM */, 0x6943_4350 /* iCCP */, 0x7342_4954 /* sBIT */]
        var at = 8
        var width = 0, height = 0, channels = 0, depth = 8, interlaced = false
        var compressed: [UInt8] = []
        var idatRun = 0  // 0: none yet, 1: in the IDAT run, 2: after it
        var ended = false
        while at + 12 <= data.count {
            let length = u32(at), t = type(at + 4)
            guard length <= data.count - at - 12 else { return nil }
            let body = UnsafeRawBufferPointer(rebasing: data[(at + 8) ..< (at + 8 + length)])
            let critical = data[at + 4] & 0x20 == 0
            if critical {
                let crc = UInt32(u32(at + 8 + length))
                guard Inflate.crc32(UnsafeRawBufferPointer(rebasing: data[(at + 4) ..< (at + 8 + length)])) == crc else { return nil }
            }
            if at == 8 {
                // IHDR first: 8 or 16 bits, grey (0), RGB (2), grey and alpha (4)
                // or RGBA (6), deflate, filter method 0, Adam7 or not interlaced.
                guard t == IHDR, length == 13, body[8] == 8 || body[8] == 16, [0, 2, 4, 6].contains(body[9]),
                      body[10] == 0, body[11] == 0, body[12] <= 1 else { return nil }
                width = u32(at + 8)
                height = u32(at + 12)
                channels = [0: 1, 2: 3, 4: 2, 6: 4][body[9]] ?? 0
                depth = Int(body[8])
                interlaced = body[12] == 1
                // libpng's own limit (a million a side): beyond it, its error.
                guard (1 ... 1_000_000).contains(width), (1 ... 1_000_000).contains(height) else { return nil }
            } else if t == IDAT {
                guard idatRun < 2 else { return nil }
                idatRun = 1
                compressed.append(contentsOf: body)
            } else if t == IEND {
                ended = true
                break
            } else {
                if idatRun == 1 { idatRun = 2 }
                guard !critical, !refused.contains(t) else { return nil }
            }
            at += 12 + length
        }
        guard ended, idatRun > 0 else { return nil }
        try checkSize(width, height)
        guard depth == 8, channels >= 3, !interlaced else {
            return general(compressed, width: width, height: height, channels: channels, depth: depth, interlaced: interlaced)
        }
        let (rowBytes, overflow) = width.multipliedReportingOverflow(by: channels)
        let (area, o3) = width.multipliedReportingOverflow(by: height)
        let (count, o4) = area.multipliedReportingOverflow(by: 4)
        guard !overflow, !o3, !o4 else { return nil }
        var ok = false
        // The rows inflated one at a time into a row buffer and unfiltered
        // into the picture: no copy of the whole inflated stream (the
        // picture is the only large allocation, as with libpng).
        let pixels = [UInt8](unsafeUninitializedCapacity: count) { out, n in
            if let target = out.baseAddress {
                var rows = Unfilter(width: width, channels: channels, out: target)
                ok = Inflate.rows(compressed, rowBytes: rowBytes + 1, rows: height) { rows.next($0) }
                rows.finish()
            }
            n = count
        }
        return ok ? RGBAImage(width: width, height: height, pixels: pixels) : nil
    }

    /// Adam7's seven passes: each pass's first column and row, and its steps.
    static let adam7: [(x: Int, y: Int, dx: Int, dy: Int)] =
        [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]

    /// Any grey, grey-alpha, RGB or RGBA file of 8 or 16 bits, interlaced
    /// or not: each pass's rows inflated one at a time, unfiltered a byte
    /// at a step (`bpp` bytes a pixel), and each pixel put in its place
    /// as RGBA8. Nil where the data does not check (libpng then says why).
    static func general(_ compressed: [UInt8], width: Int, height: Int, channels: Int, depth: Int,
                        interlaced: Bool) -> RGBAImage? {
        let bpp = channels * depth / 8
        let (area, o1) = width.multipliedReportingOverflow(by: height)
        let (count, o2) = area.multipliedReportingOverflow(by: 4)
        guard !o1, !o2 else { return nil }
        let passes = interlaced ? adam7 : [(x: 0, y: 0, dx: 1, dy: 1)]
        // Each pass's size; a pass with no column or no row has no rows in the stream.
        let sizes = passes.map { p in
            (w: width > p.x ? (width - p.x + p.dx - 1) / p.dx : 0, h: height > p.y ? (height - p.y + p.dy - 1) / p.dy : 0)
        }
        let runs = sizes.map { $0.w > 0 && $0.h > 0 ? (rowBytes: $0.w * bpp + 1, rows: $0.h) : (rowBytes: 1, rows: 0) }
        let longest = runs.map(\.rowBytes).max() ?? 1
        let rows = UnsafeMutablePointer<UInt8>.allocate(capacity: longest * 2)
        defer { rows.deallocate() }
        var ok = false
        let pixels = [UInt8](unsafeUninitializedCapacity: count) { out, n in
            guard let target = out.baseAddress else { n = count; return }
            var pass = -1, y = 0
            var prev = rows, cur = rows + longest
            ok = Inflate.rows(compressed, runs: runs) { index, src in
                if index != pass {
                    // A new pass: zeros above its first row.
                    pass = index
                    y = 0
                    prev.update(repeating: 0, count: longest)
                }
                let n = runs[index].rowBytes - 1
                let data = src + 1
                guard PNGRows.unfilter(src[0], data, into: cur, above: prev, count: n, bpp: bpp) else { return false }
                let p = passes[index]
                let row = target + ((p.y + y * p.dy) * width + p.x) * 4
                for i in 0 ..< sizes[index].w {
                    let o = row + i * p.dx * 4, s = cur + i * bpp
                    // A sample in 8 bits: a 16-bit one rounded to the nearest level.
                    func sample(_ k: Int) -> UInt8 {
                        depth == 8 ? s[k] : UInt8(((UInt32(s[2 * k]) << 8 | UInt32(s[2 * k + 1])) * 255 + 32767) / 65535)
                    }
                    switch channels {
                    case 1: let g = sample(0); o[0] = g; o[1] = g; o[2] = g; o[3] = 255
                    case 2: let g = sample(0); o[0] = g; o[1] = g; o[2] = g; o[3] = sample(1)
                    case 3: o[0] = sample(0); o[1] = sample(1); o[2] = sample(2); o[3] = 255
                    default: o[0] = sample(0); o[1] = sample(1); o[2] = sample(2); o[3] = sample(3)
                    }
                }
                swap(&prev, &cur)
                y += 1
                return true
            }
            n = count
        }
        return ok ? RGBAImage(width: width, height: height, pixels: pixels) : nil
    }

    /// Unfilters rows (a filter byte, then `width × channels` bytes each)
    /// one at a time into RGBA at `out` (RGB gets alpha 255).
    struct Unfilter {
        let width: Int, channels: Int, rowBytes: Int
        let out: UnsafeMutablePointer<UInt8>
        /// The row before and this one, unfiltered, in the file's layout
        /// (zeros above the first row).
        private var prev: UnsafeMutablePointer<UInt8>, cur: UnsafeMutablePointer<UInt8>
        private let rows: UnsafeMutablePointer<UInt8>
        private var y = 0

        init(width: Int, channels: Int, out: UnsafeMutablePointer<UInt8>) {
            self.width = width
            self.channels = channels
            self.out = out
            rowBytes = width * channels
            rows = UnsafeMutablePointer<UInt8>.allocate(capacity: rowBytes * 2)
            rows.initialize(repeating: 0, count: rowBytes * 2)
            prev = rows
            cur = rows + rowBytes
        }

        /// Frees the row buffers.
        func finish() { rows.deallocate() }

        /// The next row (`src[0]` its filter byte); false for a filter byte
        /// above 4.
        mutating func next(_ src: UnsafePointer<UInt8>) -> Bool {
            // RGBA rows are unfiltered straight into the picture, the row above read there.
            let dst = channels == 4 ? out + y * rowBytes : cur
            let up: UnsafePointer<UInt8> = channels == 4
                ? (y == 0 ? UnsafePointer(prev) : UnsafePointer(out + (y - 1) * rowBytes)) : UnsafePointer(prev)
            guard PNGRows.unfilter(src[0], src + 1, into: dst, above: up, count: rowBytes, bpp: channels) else { return false }
            if channels == 3 {
                let o = out + y * width * 4
                for x in 0 ..< width {
                    o[x * 4] = dst[x * 3]; o[x * 4 + 1] = dst[x * 3 + 1]; o[x * 4 + 2] = dst[x * 3 + 2]; o[x * 4 + 3] = 255
                }
                swap(&prev, &cur)
            }
            y += 1
            return true
        }
    }

    /// Undoes `filter` (0–4) on `count` bytes of a row (`bpp` bytes a
    /// pixel) from `src` into `dst`, the row above (unfiltered) at `up`;
    /// false for a filter above 4. Four bytes a pixel go through Paeth four
    /// channels at a step.
    @inline(__always)
    static func unfilter(_ filter: UInt8, _ src: UnsafePointer<UInt8>, into dst: UnsafeMutablePointer<UInt8>,
                         above up: UnsafePointer<UInt8>, count: Int, bpp: Int) -> Bool {
        let lead = min(bpp, count)
        switch filter {
        case 0:
            dst.update(from: src, count: count)
        case 1:
            for i in 0 ..< lead { dst[i] = src[i] }
            for i in lead ..< count { dst[i] = src[i] &+ dst[i - bpp] }
        case 2:
            for i in 0 ..< count { dst[i] = src[i] &+ up[i] }
        case 3:
            for i in 0 ..< lead { dst[i] = src[i] &+ up[i] >> 1 }
            for i in lead ..< count { dst[i] = src[i] &+ UInt8((UInt16(dst[i - bpp]) + UInt16(up[i])) >> 1) }
        case 4:
            if bpp == 4 { paeth4(src, dst, up, count / 4) } else { paeth(src, dst, up, count, bpp) }
        default:
            return false
        }
        return true
    }

    /// Paeth for 4 bytes a pixel, the four channels at once.
    @inline(__always)
    static func paeth4(_ src: UnsafePointer<UInt8>, _ dst: UnsafeMutablePointer<UInt8>, _ up: UnsafePointer<UInt8>, _ width: Int) {
        typealias V = SIMD4<Int16>
        func load(_ p: UnsafePointer<UInt8>) -> V {
            V(truncatingIfNeeded: UnsafeRawPointer(p).loadUnaligned(as: SIMD4<UInt8>.self))
        }
        func magnitude(_ v: V) -> V { v.replacing(with: 0 &- v, where: v .< 0) }
        var a = V(repeating: 0), c = V(repeating: 0)
        for x in 0 ..< width {
            let o = x * 4
            let b = load(up + o)
            let pa = magnitude(b &- c), pb = magnitude(a &- c), pc = magnitude(a &+ b &- c &- c)
            var predictor = c
            predictor.replace(with: b, where: pb .<= pc)
            predictor.replace(with: a, where: (pa .<= pb) .& (pa .<= pc))
            let value = (load(src + o) &+ predictor) & 0xFF
            UnsafeMutableRawPointer(dst + o).storeBytes(of: SIMD4<UInt8>(truncatingIfNeeded: value), as: SIMD4<UInt8>.self)
            a = value
            c = b
        }
    }

    /// Paeth for any bytes a pixel, a byte at a step.
    static func paeth(_ src: UnsafePointer<UInt8>, _ dst: UnsafeMutablePointer<UInt8>, _ up: UnsafePointer<UInt8>,
                              _ count: Int, _ bpp: Int) {
        for i in 0 ..< count {
            let a = i >= bpp ? Int(dst[i - bpp]) : 0, b = Int(up[i]), c = i >= bpp ? Int(up[i - bpp]) : 0
            let pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c)
            let predictor = pa <= pb && pa <= pc ? a : (pb <= pc ? b : c)
            dst[i] = src[i] &+ UInt8(predictor)
        }
    }
}
