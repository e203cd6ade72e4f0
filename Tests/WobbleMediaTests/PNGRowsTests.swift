import Foundation
@testable import WobbleMedia
import WobbleCore
import WobbleSystem
import XCTest

/// `PNGRows`, the reader of the common 8-bit RGB(A) PNGs, gives libpng's
/// pixels (every filter, RGB and RGBA, odd widths; grey, 16-bit and
/// interlaced files as libpng gives them plain), and leaves to libpng —
/// the same picture or the same error — whatever it does not read itself.
final class PNGRowsTests: XCTestCase {
    /// A deterministic generator (the same bytes every run).
    struct Bytes {
        var state: UInt64
        mutating func next() -> UInt8 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
    }

    static func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 255), UInt8(v >> 16 & 255), UInt8(v >> 8 & 255), UInt8(v & 255)] }

    static func chunk(_ type: String, _ body: [UInt8]) -> [UInt8] {
        let t = Array(type.utf8)
        let crc = (t + body).withUnsafeBytes { Inflate.crc32($0) }
        return be32(body.count) + t + body + be32(Int(crc))
    }

    /// A zlib stream of stored blocks (no compression): any bytes, no encoder needed.
    static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var at = 0
        repeat {
            let n = min(65535, data.count - at)
            let last: UInt8 = at + n == data.count ? 1 : 0
            out += [last, UInt8(n & 255), UInt8(n >> 8), UInt8(~n & 255), UInt8(~n >> 8 & 255)]
            out += data[at ..< at + n]
            at += n
        } while at < data.count
        var a: UInt32 = 1, b: UInt32 = 0
        for x in data { a = (a + UInt32(x)) % 65521; b = (b + a) % 65521 }
        return out + be32(Int(b << 16 | a))
    }

    /// A PNG of random filtered rows (each row's filter byte 0–4 in turn,
    /// or `filter` for all), `channels` 3 or 4; `idatSplit` IDAT chunks.
    static func png(width: Int, height: Int, channels: Int, seed: UInt64, filter: UInt8? = nil, idatSplit: Int = 1,
                    extra: [[UInt8]] = []) -> [UInt8] {
        var g = Bytes(state: seed)
        var raw: [UInt8] = []
        for y in 0..<height {
            raw.append(filter ?? UInt8(y % 5))
            for _ in 0..<(width * channels) { raw.append(g.next()) }
        }
        let z = zlibStored(raw)
        var file: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        file += chunk("IHDR", be32(width) + be32(height) + [8, channels == 4 ? 6 : 2, 0, 0, 0])
        for e in extra { file += e }
        let part = (z.count + idatSplit - 1) / idatSplit
        for k in 0..<idatSplit { file += chunk("IDAT", Array(z[min(z.count, k * part) ..< min(z.count, (k + 1) * part)])) }
        return file + chunk("IEND", [])
    }

    enum Outcome: Equatable { case image(RGBAImage), error(String) }

    static func decode(_ file: [UInt8], viaRows: Bool) -> Outcome {
        file.withUnsafeBytes { raw in
            do {
                return .image(try PNGCodec.decode(raw, corrupt: { MediaError("corrupt: \($0)") }, checkSize: limit, viaRows: viaRows))
            } catch {
                return .error("\(error)")
            }
        }
    }

    static func rowsRead(_ file: [UInt8]) throws -> Bool {
        try file.withUnsafeBytes { try PNGRows.decode($0, checkSize: limit) != nil }
    }

    /// What ImageIO refuses before reading pixels (a mutated header can claim any size).
    static func limit(_ w: Int, _ h: Int) throws {
        if w > 4096 || h > 4096 { throw MediaError("\(w)×\(h) is too large") }
    }

    func testEveryFilterGivesLibpngsPixels() throws {
        for (w, h) in [(1, 1), (1, 7), (3, 5), (17, 9), (64, 33), (301, 20)] {
            for channels in [3, 4] {
                for filter: UInt8? in [nil, 0, 1, 2, 3, 4] {
                    let file = Self.png(width: w, height: h, channels: channels, seed: UInt64(w * 1000 + h * 10 + channels),
                                        filter: filter, idatSplit: w > 60 ? 3 : 1)
                    XCTAssertTrue(try Self.rowsRead(file), "\(w)×\(h)×\(channels) filter \(String(describing: filter))")
                    let ours = Self.decode(file, viaRows: true), libpng = Self.decode(file, viaRows: false)
                    guard case .image = libpng else { return XCTFail("libpng refused \(w)×\(h): \(libpng)") }
                    XCTAssertEqual(ours, libpng, "\(w)×\(h)×\(channels) filter \(String(describing: filter))")
                }
            }
        }
    }

    /// A PNG of any grey/RGB(A) colour type, 8 or 16 bits, Adam7 or not,
    /// from `bytes` (the rows' samples, big-endian, `width × bpp` bytes a
    /// row), each pass's rows filtered 0–4 in turn (the filters applied
    /// as an encoder applies them).
    static func png(width: Int, height: Int, colourType: UInt8, depth: UInt8, interlaced: Bool, bytes: [UInt8]) -> [UInt8] {
        let channels = [0: 1, 2: 3, 4: 2, 6: 4][colourType] ?? 1
        let bpp = channels * Int(depth) / 8
        let passes = interlaced ? PNGRows.adam7 : [(x: 0, y: 0, dx: 1, dy: 1)]
        var raw: [UInt8] = []
        for p in passes {
            let pw = width > p.x ? (width - p.x + p.dx - 1) / p.dx : 0, ph = height > p.y ? (height - p.y + p.dy - 1) / p.dy : 0
            guard pw > 0, ph > 0 else { continue }
            var prev = [UInt8](repeating: 0, count: pw * bpp)
            for j in 0 ..< ph {
                var row: [UInt8] = []
                for i in 0 ..< pw {
                    let at = ((p.y + j * p.dy) * width + p.x + i * p.dx) * bpp
                    row += bytes[at ..< at + bpp]
                }
                let filter = UInt8(j % 5)
                raw.append(filter)
                for k in row.indices {
                    let a = k >= bpp ? Int(row[k - bpp]) : 0, b = Int(prev[k]), c = k >= bpp ? Int(prev[k - bpp]) : 0
                    let predictor: Int
                    switch filter {
                    case 1: predictor = a
                    case 2: predictor = b
                    case 3: predictor = (a + b) / 2
                    case 4:
                        let pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c)
                        predictor = pa <= pb && pa <= pc ? a : (pb <= pc ? b : c)
                    default: predictor = 0
                    }
                    raw.append(row[k] &- UInt8(truncatingIfNeeded: predictor))
                }
                prev = row
            }
        }
        var file: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        file += chunk("IHDR", be32(width) + be32(height) + [depth, colourType, 0, 0, interlaced ? 1 : 0])
        return file + chunk("IDAT", zlibStored(raw)) + chunk("IEND", [])
    }

    /// Grey, grey-alpha, RGB and RGBA at 8 and 16 bits, interlaced or not,
    /// at sizes that leave some of Adam7's passes empty: read here, and
    /// the pixels libpng gives for the same file not interlaced (libpng's
    /// own reading of a 16-bit interlaced file is wrong on its first six
    /// passes' rows, so it is compared only where it is right).
    func testGreyDeepAndInterlacedFilesGiveLibpngsPlainPixels() throws {
        for (w, h) in [(1, 1), (3, 2), (5, 9), (8, 8), (33, 17)] {
            for colourType: UInt8 in [0, 2, 4, 6] {
                for depth: UInt8 in [8, 16] {
                    let channels = [0: 1, 2: 3, 4: 2, 6: 4][colourType] ?? 1
                    var g = Bytes(state: UInt64(w * 131 + h * 7 + Int(colourType) * 3 + Int(depth)))
                    let bytes = (0 ..< w * h * channels * Int(depth) / 8).map { _ in g.next() }
                    let what = "\(w)×\(h), colour type \(colourType), \(depth) bits"
                    let plain = Self.png(width: w, height: h, colourType: colourType, depth: depth, interlaced: false, bytes: bytes)
                    let adam7 = Self.png(width: w, height: h, colourType: colourType, depth: depth, interlaced: true, bytes: bytes)
                    let libpng = Self.decode(plain, viaRows: false)
                    guard case .image = libpng else { return XCTFail("libpng refused \(what): \(libpng)") }
                    XCTAssertTrue(try Self.rowsRead(plain), what)
                    XCTAssertTrue(try Self.rowsRead(adam7), what)
                    XCTAssertEqual(Self.decode(plain, viaRows: true), libpng, what)
                    XCTAssertEqual(Self.decode(adam7, viaRows: true), libpng, what + ", interlaced")
                    if depth == 8 { XCTAssertEqual(Self.decode(adam7, viaRows: false), libpng, what + ", interlaced, libpng") }
                }
            }
        }
    }

    /// A 16-bit interlaced photo-like file (every sample distinct from its
    /// neighbours' top byte): the rows libpng's simplified reader gets
    /// wrong are right here, against the same file written plain.
    func testSixteenBitInterlacedReadsAsItsPlainTwin() throws {
        let w = 45, h = 30
        var bytes: [UInt8] = []
        for y in 0 ..< h {
            for x in 0 ..< w {
                for c in 0 ..< 3 {
                    let v = (x * 1400 + y * 2100 + c * 9000 + 37) & 0xFFFF
                    bytes += [UInt8(v >> 8), UInt8(v & 255)]
                }
            }
        }
        let plain = Self.png(width: w, height: h, colourType: 2, depth: 16, interlaced: false, bytes: bytes)
        let adam7 = Self.png(width: w, height: h, colourType: 2, depth: 16, interlaced: true, bytes: bytes)
        guard case .image(let truth) = Self.decode(plain, viaRows: false) else { return XCTFail("libpng refused the plain file") }
        // The rounding libpng uses for 16 bits: (v × 255 + 32767) / 65535.
        let v = (1 * 1400 + 2 * 2100 + 0 + 37) & 0xFFFF
        XCTAssertEqual(truth.pixels[(2 * w + 1) * 4], UInt8((v * 255 + 32767) / 65535))
        XCTAssertEqual(Self.decode(adam7, viaRows: true), .image(truth))
    }

    func testOurOwnFramesAtEveryLevelReadAsLibpngReadsThem() throws {
        var g = Bytes(state: 7)
        // A smooth picture with noise (what Paeth is chosen for) and transparent corners.
        let w = 97, h = 61
        var px = [UInt8](repeating: 0, count: w * h * 4)
        for y in 0..<h {
            for x in 0..<w {
                let k = (y * w + x) * 4
                px[k] = UInt8((x * 2 + Int(g.next() % 9)) & 255); px[k + 1] = UInt8((y * 4) & 255)
                px[k + 2] = UInt8((x + y + Int(g.next() % 5)) & 255); px[k + 3] = x < 5 && y < 5 ? 0 : 255
            }
        }
        let image = RGBAImage(width: w, height: h, pixels: px)
        for level in [0, 1, 6, 9] {
            let file = PNGCodec.encode(image, level: level)
            XCTAssertTrue(try Self.rowsRead(file), "level \(level)")
            XCTAssertEqual(Self.decode(file, viaRows: true), .image(image), "level \(level)")
            XCTAssertEqual(Self.decode(file, viaRows: false), .image(image), "level \(level)")
        }
    }

    func testWhatItDoesNotReadIsLibpngsPictureOrError() throws {
        let good = Self.png(width: 20, height: 6, channels: 4, seed: 3)
        var cases: [(String, [UInt8])] = []
        var badCRC = good; badCRC[good.count - 13] ^= 0xFF   // the last IDAT's CRC
        cases.append(("a bad IDAT CRC", badCRC))
        var badFilter = Self.png(width: 20, height: 6, channels: 4, seed: 3, filter: 1)
        // The first row's filter byte: stored block data starts after the IHDR chunk (33), IDAT header (8), zlib (2), block header (5).
        badFilter[8 + 25 + 8 + 2 + 5] = 5
        badFilter.replaceSubrange((badFilter.count - 12 - 4 - 4) ..< (badFilter.count - 12), with: [UInt8](repeating: 0, count: 4))
        cases.append(("a filter byte of 5 (and its stream's check broken)", badFilter))
        cases.append(("cut short", Array(good.prefix(good.count - 30))))
        cases.append(("no IEND", Array(good.prefix(good.count - 12))))
        cases.append(("a tRNS chunk", Self.png(width: 4, height: 4, channels: 3, seed: 5, extra: [Self.chunk("tRNS", [0, 1, 0, 2, 0, 3])])))
        cases.append(("a gAMA chunk", Self.png(width: 4, height: 4, channels: 4, seed: 5, extra: [Self.chunk("gAMA", Self.be32(45455))])))
        cases.append(("interlaced, its stream a plain one's length", { var f = Self.png(width: 4, height: 4, channels: 4, seed: 6)
            f[8 + 8 + 12] = 1
            let crc = f[12 ..< 29].withUnsafeBytes { Inflate.crc32($0) }
            f.replaceSubrange(29 ..< 33, with: Self.be32(Int(crc)))
            return f }()))
        cases.append(("an unknown ancillary chunk", Self.png(width: 5, height: 3, channels: 4, seed: 8, extra: [Self.chunk("teSt", [1, 2, 3])])))
        for (what, file) in cases {
            XCTAssertEqual(Self.decode(file, viaRows: true), Self.decode(file, viaRows: false), what)
        }
        // The ones it must leave to libpng are left.
        for (what, file) in cases.prefix(7) { XCTAssertFalse(try Self.rowsRead(file), what) }
        XCTAssertTrue(try Self.rowsRead(cases[7].1))
        // A size refused before any pixel is read, as libpng's path refuses it.
        struct TooBig: Error {}
        XCTAssertThrowsError(try good.withUnsafeBytes { try PNGRows.decode($0, checkSize: { _, _ in throw TooBig() }) }) {
            XCTAssertTrue($0 is TooBig)
        }
    }

    /// Mutated files (a byte of the chunk data changed and its CRC made
    /// good again, so that the damage reaches zlib and the rows): both
    /// readers give the same picture or the same error.
    func testMutatedFilesReadAsLibpngReadsThem() throws {
        var g = Bytes(state: 99)
        let w = 37, h = 23
        var px = [UInt8](repeating: 0, count: w * h * 4)
        for k in px.indices { px[k] = UInt8(truncatingIfNeeded: k / 7 + Int(g.next() % 3)) }
        // The general path's files too: an interlaced 8-bit grey one and a
        // plain 16-bit grey-alpha one (libpng reads both right).
        let grey = (0 ..< 21 * 13).map { _ in g.next() }, greyAlpha = (0 ..< 17 * 9 * 4).map { _ in g.next() }
        let sources = [PNGCodec.encode(RGBAImage(width: w, height: h, pixels: px), level: 6),
                       Self.png(width: 19, height: 11, channels: 3, seed: 11, idatSplit: 2),
                       Self.png(width: 21, height: 13, colourType: 0, depth: 8, interlaced: true, bytes: grey),
                       Self.png(width: 17, height: 9, colourType: 4, depth: 16, interlaced: false, bytes: greyAlpha)]
        var read = 0
        for n in 0..<800 {
            var f = sources[n % sources.count]
            // The chunks' places.
            var chunks: [(start: Int, length: Int)] = []
            var at = 8
            while at + 12 <= f.count {
                let length = Int(f[at]) << 24 | Int(f[at + 1]) << 16 | Int(f[at + 2]) << 8 | Int(f[at + 3])
                chunks.append((at, length))
                at += 12 + length
            }
            let c = chunks[Int(g.next()) % chunks.count]
            guard c.length > 0 else { continue }
            for _ in 0 ..< 1 + Int(g.next() % 3) {
                f[c.start + 8 + Int(UInt32(g.next()) << 8 | UInt32(g.next())) % c.length] ^= 1 << (g.next() % 8)
            }
            let crc = f[(c.start + 4) ..< (c.start + 8 + c.length)].withUnsafeBytes { Inflate.crc32($0) }
            f.replaceSubrange((c.start + 8 + c.length) ..< (c.start + 12 + c.length), with: Self.be32(Int(crc)))
            let ours = Self.decode(f, viaRows: true)
            XCTAssertEqual(ours, Self.decode(f, viaRows: false), "case \(n)")
            if case .image = ours, (try? Self.rowsRead(f)) == true { read += 1 }
        }
        // Some mutated files are still read by PNGRows itself (a changed pixel byte in a stored block).
        XCTAssertGreaterThan(read, 20)
    }
}
