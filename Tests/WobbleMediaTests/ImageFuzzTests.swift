import Foundation
import XCTest
import WobbleCore
@testable import WobbleMedia
import WobbleSystem


extension RGBAImage {
    /// Nearest-neighbour enlargement by an integer factor.
    func scaled(_ factor: Int) -> RGBAImage {
        var pixels: [UInt8] = []
        pixels.reserveCapacity(self.pixels.count * factor * factor)
        for y in 0..<height * factor {
            for x in 0..<width * factor {
                let p = pixel(x / factor, y / factor)
                pixels += [p.r, p.g, p.b, p.a]
            }
        }
        return RGBAImage(width: width * factor, height: height * factor, pixels: pixels)
    }
}

/// Mutates valid PNG and JPEG files and feeds them to `ImageIO.decode`:
/// no input may crash or hang the decoder, and every failure must be a
/// `MediaError` naming the file.
///
/// `WOBBLE_FUZZ_CASES` sets the number of cases (default 300, a second or
/// two), `WOBBLE_FUZZ_SEED` the seed; `WOBBLE_FUZZ_LAST` names a file that
/// holds the case being decoded (to reproduce a crash). `Scripts/fuzz-images.sh`
/// runs a long campaign.
final class ImageFuzzTests: XCTestCase {
    /// Where the chunks of a PNG are: (offset of the length field, data length).
    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }

    /// `png` with `chunks` (type, data) right after IHDR.
    static func insertChunks(_ chunks: [(String, [UInt8])], into png: [UInt8]) -> [UInt8] {
        var out = Array(png[..<33])
        for (type, data) in chunks {
            let typed = Array(type.utf8) + data
            out += be32(UInt32(data.count)) + typed + be32(crc32(typed[...]))
        }
        return out + png[33...]
    }

    /// `data` as a zlib stream of stored (uncompressed) deflate blocks.
    static func storedZlib(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var at = 0
        repeat {
            let n = min(65535, data.count - at)
            let final: UInt8 = at + n == data.count ? 1 : 0
            out += [final, UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8((~n >> 8) & 0xFF)] + data[at..<(at + n)]
            at += n
        } while at < data.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in data { a = (a + UInt32(byte)) % 65521; b = (b + a) % 65521 }
        return out + be32(b << 16 | a)
    }

    static func pngChunks(_ bytes: [UInt8]) -> [(offset: Int, length: Int)] {
        var chunks: [(Int, Int)] = []
        var at = 8
        while at + 12 <= bytes.count {
            let length = Int(readU32(bytes, at))
            guard length <= bytes.count - at - 12 else { break }
            chunks.append((at, length))
            at += 12 + length
        }
        return chunks
    }

    /// Recomputes every CRC it can find, so mutations get past libpng's CRC check.
    static func fixPNGCRCs(_ bytes: inout [UInt8]) {
        for (offset, length) in pngChunks(bytes) {
            writeU32(&bytes, offset + 8 + length, crc32(bytes[(offset + 4)..<(offset + 8 + length)]))
        }
    }

    /// Offsets of JPEG marker segments that carry a length (FFxx, not RSTn/SOI/EOI).
    static func jpegSegments(_ bytes: [UInt8]) -> [Int] {
        var result: [Int] = []
        var at = 2
        while at + 4 <= bytes.count, bytes[at] == 0xFF {
            let marker = bytes[at + 1]
            if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) { at += 2; continue }
            result.append(at)
            if marker == 0xDA { break }  // entropy-coded data follows
            at += 2 + Int(bytes[at + 2]) << 8 + Int(bytes[at + 3])
        }
        return result
    }

    static let interesting: [UInt32] = [0, 1, 2, 7, 255, 256, 16383, 16384, 16385, 65535, 65536,
                                         0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF]

    /// One mutated file from a seed.
    static func mutate(_ seed: [UInt8], isPNG: Bool, other: [UInt8], random r: inout SplitMix64) -> (bytes: [UInt8], kind: String) {
        var bytes = seed
        var kinds: [String] = []
        for _ in 0..<(1 + r.below(3)) {
            switch r.below(isPNG ? 10 : 9) {
            case 0:
                kinds.append("bitflip")
                for _ in 0..<(1 + r.below(8)) where !bytes.isEmpty {
                    bytes[r.below(bytes.count)] ^= 1 << UInt8(r.below(8))
                }
            case 1:
                kinds.append("truncate")
                bytes = Array(bytes.prefix(r.below(bytes.count + 1)))
            case 2:
                kinds.append("insert")
                let at = r.below(bytes.count + 1)
                bytes.insert(contentsOf: (0..<(1 + r.below(16))).map { _ in r.byte() }, at: at)
            case 3:
                kinds.append("delete")
                if !bytes.isEmpty {
                    let at = r.below(bytes.count)
                    bytes.removeSubrange(at..<min(bytes.count, at + 1 + r.below(32)))
                }
            case 4:
                kinds.append("overwrite")
                for _ in 0..<(1 + r.below(4)) where !bytes.isEmpty {
                    bytes[r.below(bytes.count)] = [0, 0xFF, 0x7F, 0x80, 1][r.below(5)]
                }
            case 5:
                kinds.append("splice")
                let cut = r.below(bytes.count + 1)
                bytes = Array(bytes.prefix(cut)) + Array(other.suffix(r.below(other.count + 1)))
            case 6:
                kinds.append("dimensions")
                if isPNG, bytes.count >= 24 {
                    writeU32(&bytes, 16, interesting[r.below(interesting.count)] &+ UInt32(r.below(3)))
                    writeU32(&bytes, 20, r.chance(percent: 50) ? interesting[r.below(interesting.count)] : UInt32(r.below(70000)))
                } else if !isPNG, let sof = (0..<max(0, bytes.count - 9)).first(where: {
                    bytes[$0] == 0xFF && (0xC0...0xCF).contains(bytes[$0 + 1]) && ![0xC4, 0xC8, 0xCC].contains(bytes[$0 + 1])
                }) {
                    let h = r.chance(percent: 50) ? UInt16(truncatingIfNeeded: interesting[r.below(interesting.count)]) : UInt16(r.below(65536))
                    let w = r.chance(percent: 50) ? UInt16(truncatingIfNeeded: interesting[r.below(interesting.count)]) : UInt16(r.below(65536))
                    bytes[sof + 5] = UInt8(h >> 8); bytes[sof + 6] = UInt8(h & 0xFF)
                    bytes[sof + 7] = UInt8(w >> 8); bytes[sof + 8] = UInt8(w & 0xFF)
                }
            case 7:
                kinds.append("length")
                if isPNG {
                    let chunks = pngChunks(bytes)
                    if !chunks.isEmpty {
                        let (offset, length) = chunks[r.below(chunks.count)]
                        let value = r.chance(percent: 50) ? interesting[r.below(interesting.count)] : UInt32(max(0, length + r.below(64) - 32))
                        writeU32(&bytes, offset, value)
                    }
                } else {
                    let segments = jpegSegments(bytes)
                    if !segments.isEmpty {
                        let at = segments[r.below(segments.count)]
                        let value = UInt16(truncatingIfNeeded: r.chance(percent: 50) ? interesting[r.below(interesting.count)] : UInt32(r.below(65536)))
                        bytes[at + 2] = UInt8(value >> 8); bytes[at + 3] = UInt8(value & 0xFF)
                    }
                }
            case 8:
                kinds.append("field")
                // A byte inside a header or segment (where parsers branch most).
                if !bytes.isEmpty {
                    bytes[r.below(min(bytes.count, 300))] = r.byte()
                }
            default:
                kinds.append("chunkdata")
                // PNG: change bytes inside one chunk's data, CRC fixed below.
                let chunks = pngChunks(bytes)
                if let (offset, length) = chunks.isEmpty ? nil : chunks[r.below(chunks.count)], length > 0 {
                    for _ in 0..<(1 + r.below(4)) { bytes[offset + 8 + r.below(length)] = r.byte() }
                }
            }
        }
        // Most PNG cases get valid CRCs, to reach the decoder behind the check.
        if isPNG, r.chance(percent: 75) { fixPNGCRCs(&bytes) }
        return (bytes, kinds.joined(separator: "+"))
    }

    /// Seeds: several PNG and JPEG flavours of a small photo.
    func makeSeeds(in scratch: Scratch) throws -> [(name: String, bytes: [UInt8])] {
        let small = scratch.file("small.png")
        let photo = "/work/shared/images/chelsea.png"
        if FileManager.default.fileExists(atPath: photo) {
            try convert([photo, "-resize", "24x16!", "-alpha", "set", "-channel", "A", "-fx", "i/w", "+channel", small])
        } else {
            try writeBytes(try ImageIO.encodePNG(testImage(width: 24, height: 16)), to: small)
        }
        let variants: [(String, [String])] = [
            ("rgba8.png", [small]),
            ("rgb16.png", [small, "-alpha", "off", "-depth", "16", "PNG48:"]),
            ("gray.png", [small, "-colorspace", "Gray", "-alpha", "off", "-define", "png:color-type=0"]),
            ("palette.png", [small, "PNG8:"]),
            ("interlaced.png", [small, "-interlace", "PNG"]),
            ("baseline.jpg", [small, "-alpha", "off", "-quality", "80"]),
            ("progressive.jpg", [small, "-alpha", "off", "-interlace", "JPEG", "-quality", "80"]),
            ("gray.jpg", [small, "-alpha", "off", "-colorspace", "Gray"]),
            ("s444.jpg", [small, "-alpha", "off", "-sampling-factor", "1x1", "-quality", "95"]),
            ("cmyk.jpg", [small, "-alpha", "off", "-colorspace", "CMYK", "-quality", "90"]),
        ]
        var seeds: [(String, [UInt8])] = []
        for (name, args) in variants {
            let path = scratch.file(name)
            var arguments = args
            if let last = arguments.last, last.hasSuffix(":") {
                arguments[arguments.count - 1] = last + path
            } else {
                arguments.append(path)
            }
            try convert(arguments)
            let bytes = try readBytes(path)
            _ = try ImageIO.decode(bytes, name: name)  // every seed is valid
            seeds.append((name, bytes))
        }
        // Our own encoder, uncompressed: several IDAT chunks (libpng's 8 KiB buffer).
        let stored = try ImageIO.encodePNG(try ImageIO.decode(seeds[0].1, name: "rgba8.png").scaled(3), compressionLevel: 0)
        XCTAssertGreaterThan(Self.pngChunks(stored).count, 3)  // IHDR, 2+ IDAT, IEND
        seeds.append(("multi-idat.png", stored))
        // Colour-managed seeds: the mutations reach the profile's bytes.
        let p3 = Chromaticities(white: (0.3127, 0.329), red: (0.68, 0.32), green: (0.265, 0.69), blue: (0.15, 0.06))
        let profile = try XCTUnwrap(ColourProfile.iccBytes(gamma: 1 / 1.8, chromaticities: p3))
        let png = seeds[0].1, jpeg = seeds.first { $0.0 == "s444.jpg" }!.1
        seeds.append(("iccp.png", Self.insertChunks([("iCCP", Array("p3".utf8) + [0, 0] + Self.storedZlib(profile))], into: png)))
        seeds.append(("gama-chrm.png", Self.insertChunks([
            ("gAMA", Self.be32(55556)), ("cHRM", [3127, 3290, 68000, 32000, 26500, 69000, 15000, 6000].flatMap { Self.be32($0) }),
        ], into: png)))
        // The profile in two APP2 parts (count 2), right after SOI.
        let half = profile.count / 2
        let parts = [profile[..<half], profile[half...]].enumerated().flatMap { i, part -> [UInt8] in
            let body = Array("ICC_PROFILE".utf8) + [0, UInt8(i + 1), 2] + part
            return [0xFF, 0xE2, UInt8((body.count + 2) >> 8), UInt8((body.count + 2) & 0xFF)] + body
        }
        seeds.append(("icc.jpg", Array(jpeg[..<2]) + parts + jpeg[2...]))
        for (name, bytes) in seeds.suffix(3) {
            var warnings: [String] = []
            _ = try ImageIO.decode(bytes, name: name, warn: { warnings.append($0) })
            XCTAssertEqual(warnings, [], name)  // every seed is valid, its profile too
        }
        return seeds
    }

    func testMutatedImagesNeverCrash() throws {
        let env = ProcessInfo.processInfo.environment
        let cases = Int(env["WOBBLE_FUZZ_CASES"] ?? "") ?? 300
        let seed = UInt64(env["WOBBLE_FUZZ_SEED"] ?? "") ?? 1
        let lastCase = env["WOBBLE_FUZZ_LAST"]
        let scratch = try Scratch()
        defer { scratch.remove() }
        let seeds = try makeSeeds(in: scratch)

        var random = SplitMix64(state: seed)
        var decoded = 0, rejected = 0
        var reasons: [String: Int] = [:]
        var slowest = (seconds: 0.0, kind: "")
        for n in 0..<cases {
            let (seedName, seedBytes) = seeds[n % seeds.count]
            let other = seeds[random.below(seeds.count)].bytes
            let (bytes, kind) = Self.mutate(seedBytes, isPNG: seedName.hasSuffix(".png"), other: other, random: &random)
            if let lastCase { try writeBytes(bytes, to: lastCase) }
            let name = "case\(n)-\(seedName)"
            let start = Date()
            do {
                let image = try ImageIO.decode(bytes, name: name)
                XCTAssertEqual(image.pixels.count, image.width * image.height * 4)
                decoded += 1
            } catch let error as MediaError {
                rejected += 1
                XCTAssertTrue(error.message.hasPrefix("image '\(name)': "), error.message)
                // The reason without the file name and the library's details.
                let reason = error.message.dropFirst("image '\(name)': ".count)
                    .split(separator: "(").first.map { String($0).trimmingCharacters(in: .whitespaces) } ?? ""
                let general = reason.contains("×") ? "too large" : reason
                reasons[general, default: 0] += 1
            } catch {
                XCTFail("case \(n) (\(kind) of \(seedName)): not a MediaError: \(error)")
            }
            let seconds = Date().timeIntervalSince(start)
            if seconds > slowest.seconds { slowest = (seconds, "\(kind) of \(seedName)") }
        }
        let summary = reasons.sorted { $0.value > $1.value }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        print("fuzz: \(cases) cases (seed \(seed)): \(decoded) decoded, \(rejected) rejected [\(summary)]; "
              + String(format: "slowest case %.1f ms (%@)", slowest.seconds * 1000, slowest.kind))
        XCTAssertEqual(decoded + rejected, cases)
        XCTAssertLessThan(slowest.seconds, 10, "a case took too long: \(slowest.kind)")
    }
}
