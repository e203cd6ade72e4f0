import Foundation
import XCTest
import WobbleCore
@testable import WobbleMedia
import WobbleSystem

/// Colour on load: every kind of tagged input against Pillow's ImageCms
/// (Little CMS, perceptual) converting the same decoded pixels
/// (Scripts/colour-fixtures.py writes the files and the references).
final class ColourTests: XCTestCase {
    /// The fixtures, written once for the whole class.
    nonisolated(unsafe) static var fixtures: Scratch?
    var dir: Scratch { Self.fixtures! }

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Scripts/colour-fixtures.py").standardized.path

    /// A Python with Pillow's ImageCms and numpy (Debian's python3-pil, python3-numpy), or nil.
    static let python: String? = {
        for p in ["/usr/bin/python3", "/usr/local/bin/python3"] where FileManager.default.isExecutableFile(atPath: p) {
            if let r = try? Tool.exec(p, ["-c", "from PIL import ImageCms; import numpy"]), r.status == 0 { return p }
        }
        return nil
    }()

    override class func tearDown() {
        fixtures?.remove()
        fixtures = nil
    }

    override func setUpWithError() throws {
        guard let py = Self.python else { throw XCTSkip("Pillow's ImageCms and numpy (python3-pil, python3-numpy) are needed for the references") }
        if Self.fixtures == nil {
            let box = try Scratch()
            let r = try Tool.exec(py, [Self.script, box.path])
            XCTAssertEqual(r.status, 0, r.stderr)
            Self.fixtures = box
        }
    }

    /// PSNR of the RGB channels of two images of one size, in dB (99 when equal).
    func psnr(_ a: RGBAImage, _ b: RGBAImage) -> Double {
        XCTAssertEqual([a.width, a.height], [b.width, b.height])
        var sum = 0.0, n = 0
        for i in stride(from: 0, to: min(a.pixels.count, b.pixels.count), by: 4) {
            for c in 0..<3 {
                let d = Double(a.pixels[i + c]) - Double(b.pixels[i + c])
                sum += d * d
            }
            n += 3
        }
        return sum == 0 ? 99 : 10 * log10(255 * 255 / (sum / Double(n)))
    }

    /// The file loaded (no warning allowed) against its reference: ≥ 40 dB,
    /// where the stored pixels taken as sRGB are far off (the test can fail).
    func assertMatchesImageCms(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> RGBAImage {
        let path = dir.path(try XCTUnwrap(try dir.list().first { $0.hasPrefix(name + ".") && !$0.contains(".ref") && !$0.contains(".alpha") }))
        var warnings: [String] = []
        let ours = try ImageIO.load(path: path, warn: { warnings.append($0) })
        XCTAssertEqual(warnings, [], file: file, line: line)
        let reference = try ImageIO.load(path: dir.path(name + ".ref.png"))
        let quality = psnr(ours, reference)
        XCTAssertGreaterThanOrEqual(quality, 40, "\(name): \(quality) dB against ImageCms", file: file, line: line)
        let stored = try storedPixels(path)
        XCTAssertLessThan(psnr(stored, reference), 35, "\(name): the stored pixels already match", file: file, line: line)
        return ours
    }

    /// The file's pixels with its colour tags taken out (what the decoder did before).
    func storedPixels(_ path: String) throws -> RGBAImage {
        var bytes = try readBytes(path)
        if bytes.starts(with: [0x89, 0x50]) {
            bytes = bytes.withUnsafeBytes { ColourTag.withoutColourChunks($0) }
        } else {
            bytes = Self.withoutAPP2(bytes)
        }
        return try ImageIO.decode(bytes, name: path)
    }

    /// A JPEG without its `APP2` segments.
    static func withoutAPP2(_ jpeg: [UInt8], keepingPart keep: ((Int) -> Bool)? = nil) -> [UInt8] {
        var out = Array(jpeg[0..<2]), i = 2, part = 0
        while i + 4 <= jpeg.count, jpeg[i] == 0xFF, jpeg[i + 1] != 0xDA {
            let end = i + 2 + (Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3]))
            if jpeg[i + 1] == 0xE2 {
                part += 1
                if keep?(part) ?? false { out += jpeg[i..<end] }
            } else {
                out += jpeg[i..<end]
            }
            i = end
        }
        return out + jpeg[i...]
    }

    // MARK: - Each kind against ImageCms

    func testAdobeRGBJPEG() throws { _ = try assertMatchesImageCms("adobe-rgb") }

    func testDisplayP3JPEG() throws { _ = try assertMatchesImageCms("display-p3") }

    func testProPhotoJPEG() throws { _ = try assertMatchesImageCms("prophoto") }

    func testProfileSplitOverAPP2Segments() throws {
        let bytes = try readBytes(dir.path("split-app2.jpg"))
        XCTAssertEqual(bytes.indices.filter { bytes[$0...].starts(with: Array("ICC_PROFILE".utf8)) }.count, 2)
        _ = try assertMatchesImageCms("split-app2")
    }

    func testPNGiCCPKeepsAlpha() throws {
        let ours = try assertMatchesImageCms("iccp")
        let alpha = try ImageIO.load(path: dir.path("iccp.alpha.png"))
        XCTAssertEqual(stride(from: 3, to: ours.pixels.count, by: 4).map { ours.pixels[$0] },
                       stride(from: 0, to: alpha.pixels.count, by: 4).map { alpha.pixels[$0] })
    }

    func testPNGgAMAcHRM() throws { _ = try assertMatchesImageCms("gama-chrm") }

    func testGreyPNGgAMA() throws { _ = try assertMatchesImageCms("grey-gama") }

    func testAdobeInvertedCMYKJPEG() throws {
        let ours = try assertMatchesImageCms("cmyk-adobe")
        XCTAssertTrue(stride(from: 3, to: ours.pixels.count, by: 4).allSatisfy { ours.pixels[$0] == 255 })
    }

    func testPlainCMYKJPEG() throws { _ = try assertMatchesImageCms("cmyk-plain") }

    // MARK: - What costs nothing and what cannot be used

    func testUntaggedAndSRGBTaggedStayAsStored() throws {
        let untagged = try ImageIO.load(path: dir.path("untagged.jpg"))
        XCTAssertEqual(try ImageIO.load(path: dir.path("srgb.jpg")), untagged)
        // The gallery's pictures: an sRGB iCCP (chelsea) and gAMA/cHRM of sRGB (sticker).
        let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Examples").standardized
        for name in ["cat/chelsea.png", "sticker/sticker.png", "latte/coffee.png"] {
            let path = examples.appendingPathComponent(name).path
            XCTAssertEqual(try ImageIO.load(path: path), try storedPixels(path), name)
        }
    }

    func testBrokenProfileWarnsOnceAndKeepsThePixels() throws {
        let untagged = try ImageIO.load(path: dir.path("untagged.jpg"))
        var warnings: [String] = []
        XCTAssertEqual(try ImageIO.load(path: dir.path("broken.jpg"), warn: { warnings.append($0) }), untagged)
        XCTAssertEqual(warnings, ["image '\(dir.path("broken.jpg"))': its ICC profile is damaged; the pixels are used as they are"])
        warnings = []
        XCTAssertEqual(try ImageIO.load(path: dir.path("broken.png"), warn: { warnings.append($0) }),
                       try ImageIO.load(path: dir.path("untagged.png")))
        XCTAssertEqual(warnings, ["image '\(dir.path("broken.png"))': its ICC profile (iCCP) is damaged; the pixels are used as they are"])
    }

    func testProfileThatCannotConvertWarns() throws {
        var warnings: [String] = []
        let image = try ImageIO.load(path: dir.path("no-curves.jpg"), warn: { warnings.append($0) })
        XCTAssertEqual(image, try ImageIO.load(path: dir.path("untagged.jpg")))
        XCTAssertEqual(warnings.count, 1)
        let prefix = "image '\(dir.path("no-curves.jpg"))': its colour profile cannot convert to sRGB (cmsCreateTransformTHR: "
        XCTAssertTrue(warnings.first?.hasPrefix(prefix) ?? false, "\(warnings)")
        XCTAssertTrue(warnings.first?.hasSuffix("); the pixels are used as they are") ?? false, "\(warnings)")
    }

    func testSplitProfileWithAPartMissingWarns() throws {
        let bytes = try readBytes(dir.path("split-app2.jpg"))
        var warnings: [String] = []
        let cut = Self.withoutAPP2(bytes, keepingPart: { $0 == 2 })
        let image = try ImageIO.decode(cut, name: "cut.jpg", warn: { warnings.append($0) })
        XCTAssertEqual(warnings, ["image 'cut.jpg': its ICC profile is incomplete (APP2 parts 2 of 2); the pixels are used as they are"])
        XCTAssertEqual(image, try ImageIO.decode(Self.withoutAPP2(bytes), name: "none.jpg"))
    }

    func testSplitProfileWithAPartRepeatedIsDamaged() throws {
        // Every part there, part 1 twice: not "incomplete (parts 1, 2 of 2)".
        let bytes = try readBytes(dir.path("split-app2.jpg"))
        var i = 2, first: ArraySlice<UInt8>?
        while i + 4 <= bytes.count, bytes[i + 1] != 0xDA {
            let end = i + 2 + (Int(bytes[i + 2]) << 8 | Int(bytes[i + 3]))
            if bytes[i + 1] == 0xE2, first == nil { first = bytes[i..<end] }
            i = end
        }
        var warnings: [String] = []
        let twice = Array(bytes[0..<2]) + Array(try XCTUnwrap(first)) + bytes[2...]
        let image = try ImageIO.decode(twice, name: "twice.jpg", warn: { warnings.append($0) })
        XCTAssertEqual(warnings, ["image 'twice.jpg': its ICC profile is damaged (APP2 part 1 appears more than once); the pixels are used as they are"])
        XCTAssertEqual(image, try ImageIO.decode(Self.withoutAPP2(bytes), name: "none.jpg"))
    }

    func testGammaOutsidePNGsRangeWarnsAndKeepsThePixels() throws {
        // gAMA 0 was ignored without a word; 0xFFFFFFFF was applied (an
        // almost black image). Both are damaged chunks: one warning, the
        // pixels as stored.
        let png = try ImageIO.encodePNG(testImage())
        let plain = try XCTUnwrap(ImageFuzzTests.pngChunks(png).first { String(decoding: png[($0.offset + 4)..<($0.offset + 8)], as: UTF8.self) == "sRGB" })
        let untagged = Array(png[..<plain.offset]) + png[(plain.offset + 12 + plain.length)...]
        for (value, why) in [(UInt32(0), "its gAMA value 0 is outside the range a PNG allows (16 to 625000000)"),
                             (0xFFFF_FFFF, "its gAMA value 4294967295 is outside the range a PNG allows (16 to 625000000)")] {
            var warnings: [String] = []
            let tagged = ImageFuzzTests.insertChunks([("gAMA", ImageFuzzTests.be32(value))], into: untagged)
            XCTAssertEqual(try ImageIO.decode(tagged, name: "g.png", warn: { warnings.append($0) }), testImage())
            XCTAssertEqual(warnings, ["image 'g.png': \(why); the pixels are used as they are"])
        }
        var warnings: [String] = []
        let short = ImageFuzzTests.insertChunks([("gAMA", [0, 0, 0xB1])], into: untagged)
        XCTAssertEqual(try ImageIO.decode(short, name: "g.png", warn: { warnings.append($0) }), testImage())
        XCTAssertEqual(warnings, ["image 'g.png': its gAMA chunk is damaged (3 bytes, not 4); the pixels are used as they are"])
        // The limits themselves are gammas.
        for value: UInt32 in [16, 625_000_000] {
            let tagged = ImageFuzzTests.insertChunks([("gAMA", ImageFuzzTests.be32(value))], into: untagged)
            XCTAssertEqual(tagged.withUnsafeBytes { ColourTag.png($0).tag },
                           .chunks(gamma: Double(value) / 100_000, chromaticities: nil))
        }
    }

    func testProfileOfTheWrongColourSpaceWarns() throws {
        // The CMYK profile on an RGB JPEG: its APP2 parts moved onto untagged.jpg.
        let cmyk = try readBytes(dir.path("cmyk-adobe.jpg")), rgb = try readBytes(dir.path("untagged.jpg"))
        var segments: [UInt8] = [], i = 2
        while i + 4 <= cmyk.count, cmyk[i + 1] != 0xDA {
            let end = i + 2 + (Int(cmyk[i + 2]) << 8 | Int(cmyk[i + 3]))
            if cmyk[i + 1] == 0xE2 { segments += cmyk[i..<end] }
            i = end
        }
        var warnings: [String] = []
        let image = try ImageIO.decode(Array(rgb[0..<2]) + segments + rgb[2...], name: "x.jpg", warn: { warnings.append($0) })
        XCTAssertEqual(warnings, ["image 'x.jpg': its ICC profile is for CMYK colour but the image is RGB; the pixels are used as they are"])
        XCTAssertEqual(image, try ImageIO.load(path: dir.path("untagged.jpg")))
    }

    // MARK: - Outputs

    func testPNGSaysSRGB() throws {
        let png = try ImageIO.encodePNG(testImage())
        // Signature, IHDR (25 bytes), then sRGB: length 1, intent 0 (perceptual).
        XCTAssertEqual(Array(png[33..<42]), [0, 0, 0, 1] + Array("sRGB".utf8) + [0])
        XCTAssertEqual(try ImageIO.decode(png, name: "x.png"), testImage())
    }
}
