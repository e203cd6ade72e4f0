import Foundation
import XCTest
import WobbleCore
@testable import WobbleMedia

final class ImageIOTests: XCTestCase {
    var scratch: Scratch!
    override func setUpWithError() throws { scratch = try Scratch() }
    override func tearDown() { scratch.remove() }

    // MARK: PNG

    func testPNGRoundTripIsExactAtEveryLevel() throws {
        let image = testImage()
        for level in 0...9 {
            let bytes = try ImageIO.encodePNG(image, compressionLevel: level)
            XCTAssertEqual(try ImageIO.decode(bytes, name: "mem"), image, "level \(level)")
        }
        XCTAssertEqual(try ImageIO.decode(try ImageIO.encodePNG(image), name: "mem"), image)
    }

    func testWritePNGIsReadableByImageMagickAndHasUsualPermissions() throws {
        let old = umask(0o022)
        defer { umask(old) }
        let path = scratch.file("out.png")
        try writeBytes([1, 2, 3], to: path)
        try ImageIO.writePNG(testImage(), to: path)
        XCTAssertEqual(try ImageIO.load(path: path), testImage())
        XCTAssertEqual(try permissions(path), 0o644)
        XCTAssertEqual(try scratch.list(), ["out.png"])  // no temporary file left
        // ImageMagick agrees on a pixel (x=6, y=4) including alpha.
        try convert([path, "-crop", "1x1+6+4", "rgba:" + scratch.file("px.raw")])
        XCTAssertEqual(try readBytes(scratch.file("px.raw")), Array(testImage().pixels[(4 * 7 + 6) * 4..<(4 * 7 + 7) * 4]))
    }

    func testEncodeEmptyImageThrows() {
        XCTAssertEqual(mediaErrorMessage { try ImageIO.encodePNG(RGBAImage(width: 0, height: 3)) },
                       "cannot write a PNG of 0×3 pixels")
    }

    func testSixteenBitRGBAPNG() throws {
        let image = testImage()
        let path = scratch.file("rgba16.png")
        try makeImage(image.pixels, width: 7, height: 5, map: "rgba", at: path, options: ["-depth", "16"], format: "PNG64:")
        XCTAssertEqual(try ImageIO.load(path: path), image)
    }

    func testGrayPNGs() throws {
        let gray: [UInt8] = [0, 100, 200, 255]
        let expected = RGBAImage(width: 4, height: 1, pixels: gray.flatMap { [$0, $0, $0, 255] })
        let g8 = scratch.file("g8.png"), g16 = scratch.file("g16.png")
        try makeImage(gray, width: 4, height: 1, map: "gray", at: g8, options: ["-define", "png:color-type=0"])
        try makeImage(gray, width: 4, height: 1, map: "gray", at: g16,
                      options: ["-define", "png:color-type=0", "-define", "png:bit-depth=16", "-depth", "16"])
        XCTAssertEqual(try ImageIO.load(path: g8), expected)
        XCTAssertEqual(try ImageIO.load(path: g16), expected)

        let ga = scratch.file("ga.png")
        let grayAlpha: [UInt8] = [10, 255, 20, 128, 30, 0, 250, 7]
        try makeImage([10, 10, 10, 255, 20, 20, 20, 128, 30, 30, 30, 0, 250, 250, 250, 7], width: 4, height: 1,
                      map: "rgba", at: ga, options: ["-define", "png:color-type=4"])
        let loaded = try ImageIO.load(path: ga)
        for i in 0..<4 {
            let p = loaded.pixel(i, 0)
            XCTAssertEqual([p.r, p.g, p.b, p.a], [grayAlpha[2 * i], grayAlpha[2 * i], grayAlpha[2 * i], grayAlpha[2 * i + 1]])
        }
    }

    func testPalettePNGWithTransparency() throws {
        let pixels: [UInt8] = [255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 0, 10, 20, 30, 255]
        let path = scratch.file("pal.png")
        try makeImage(pixels, width: 2, height: 2, map: "rgba", at: path, options: [], format: "PNG8:")
        let header = try readBytes(path)
        XCTAssertEqual(header[25], 3, "ImageMagick wrote a palette PNG")
        let loaded = try ImageIO.load(path: path)
        XCTAssertEqual(loaded.width, 2)
        // The transparent pixel's colour is not kept by ImageMagick; compare alpha there.
        XCTAssertEqual(Array(loaded.pixels[0..<8]), Array(pixels[0..<8]))
        XCTAssertEqual(loaded.pixels[11], 0)
        XCTAssertEqual(Array(loaded.pixels[12..<16]), Array(pixels[12..<16]))
    }

    func testRGBWithoutAlphaGetsOpaqueAlpha() throws {
        let path = scratch.file("rgb.png")
        try makeImage([1, 2, 3, 4, 5, 6], width: 2, height: 1, map: "rgb", at: path, options: ["-define", "png:color-type=2"])
        XCTAssertEqual(try ImageIO.load(path: path).pixels, [1, 2, 3, 255, 4, 5, 6, 255])
    }

    func testRealPhotos() throws {
        guard FileManager.default.fileExists(atPath: "/work/shared/images/coffee.png") else {
            throw XCTSkip("the shared trial photos are not here")
        }
        let coffee = try ImageIO.load(path: "/work/shared/images/coffee.png")
        XCTAssertEqual([coffee.width, coffee.height], [600, 400])
        let chelsea = try ImageIO.load(path: "/work/shared/images/chelsea.png")
        XCTAssertEqual([chelsea.width, chelsea.height], [451, 300])
    }

    // MARK: JPEG

    func testJPEGDecode() throws {
        let flat = [UInt8](repeating: 0, count: 16 * 16).flatMap { _ in [200, 100, 50] as [UInt8] }
        let path = scratch.file("flat.jpg")
        try makeImage(flat, width: 16, height: 16, map: "rgb", at: path, options: ["-quality", "100"])
        let image = try ImageIO.load(path: path)
        XCTAssertEqual([image.width, image.height], [16, 16])
        for i in stride(from: 0, to: image.pixels.count, by: 4) {
            XCTAssertEqual(Double(image.pixels[i]), 200, accuracy: 3)
            XCTAssertEqual(Double(image.pixels[i + 1]), 100, accuracy: 3)
            XCTAssertEqual(Double(image.pixels[i + 2]), 50, accuracy: 3)
            XCTAssertEqual(image.pixels[i + 3], 255)
        }
    }

    func testGrayAndCMYKJPEG() throws {
        let flat = [UInt8](repeating: 0, count: 8 * 8).flatMap { _ in [200, 100, 50] as [UInt8] }
        let gray = scratch.file("gray.jpg"), cmyk = scratch.file("cmyk.jpg")
        try makeImage([UInt8](repeating: 90, count: 64), width: 8, height: 8, map: "gray", at: gray, options: ["-quality", "100"])
        try makeImage(flat, width: 8, height: 8, map: "rgb", at: cmyk, options: ["-colorspace", "CMYK", "-quality", "100"])
        let g = try ImageIO.load(path: gray).pixel(3, 3)
        XCTAssertEqual([g.r, g.g, g.b, g.a], [90, 90, 90, 255])
        let c = try ImageIO.load(path: cmyk).pixel(3, 3)
        XCTAssertEqual(Double(c.r), 200, accuracy: 4)
        XCTAssertEqual(Double(c.g), 100, accuracy: 4)
        XCTAssertEqual(Double(c.b), 50, accuracy: 4)
        XCTAssertEqual(c.a, 255)
    }

    func testFormatIsToldByContentNotExtension() throws {
        let path = scratch.file("really-a-png.jpg")
        try writeBytes(try ImageIO.encodePNG(testImage()), to: path)
        XCTAssertEqual(try ImageIO.load(path: path), testImage())
    }

    // MARK: Errors

    func testMissingFile() {
        XCTAssertEqual(mediaErrorMessage { try ImageIO.load(path: "x.png") }, "image 'x.png': no such file")
        let path = scratch.file("nope/x.png")
        XCTAssertEqual(mediaErrorMessage { try ImageIO.load(path: path) }, "image '\(path)': no such file")
    }

    func testNotAnImageAndEmptyFile() throws {
        let text = scratch.file("x.png"), empty = scratch.file("empty.jpg")
        try writeBytes(Array("hello, world\n".utf8), to: text)
        try writeBytes([], to: empty)
        XCTAssertEqual(mediaErrorMessage { try ImageIO.load(path: text) }, "image '\(text)': not a PNG or JPEG file")
        XCTAssertEqual(mediaErrorMessage { try ImageIO.load(path: empty) }, "image '\(empty)': not a PNG or JPEG file")
    }

    func testFolderCannotBeRead() {
        XCTAssertEqual(mediaErrorMessage { try ImageIO.load(path: scratch.path) },
                       "image '\(scratch.path)': cannot read: Is a directory")
    }

    func testTruncatedPNG() throws {
        let bytes = try ImageIO.encodePNG(testImage(width: 64, height: 64))
        XCTAssertEqual(mediaErrorMessage { try ImageIO.decode(Array(bytes.prefix(bytes.count / 2)), name: "x.png") },
                       "image 'x.png': truncated or corrupt PNG (read beyond end of data)")
        XCTAssertEqual(mediaErrorMessage { try ImageIO.decode(Array(bytes.prefix(20)), name: "x.png") },
                       "image 'x.png': truncated or corrupt PNG (read beyond end of data)")
        var corrupt = bytes
        corrupt[18] ^= 1  // IHDR width, CRC not fixed
        XCTAssertEqual(mediaErrorMessage { try ImageIO.decode(corrupt, name: "x.png") },
                       "image 'x.png': truncated or corrupt PNG (IHDR: CRC error)")
    }

    func testTruncatedJPEG() throws {
        let path = scratch.file("photo.jpg"), cut = scratch.file("cut.jpg")
        try convert(["-seed", "1", "-size", "451x300", "plasma:fractal", "-quality", "90", path])
        let bytes = try readBytes(path)
        try writeBytes(Array(bytes.prefix(bytes.count / 2)), to: cut)
        XCTAssertEqual(mediaErrorMessage { try ImageIO.load(path: cut) },
                       "image '\(cut)': truncated or corrupt JPEG (Premature end of JPEG file)")
        XCTAssertEqual(mediaErrorMessage { try ImageIO.decode(Array(bytes.prefix(100)), name: "x.jpg") },
                       "image 'x.jpg': truncated or corrupt JPEG (the header is cut short or holds no image)")
        // Garbage after the end is harmless.
        let image = try ImageIO.decode(bytes + [1, 2, 3], name: "x.jpg")
        XCTAssertEqual(image.width, 451)
    }

    func testTooLargeIsRefusedBeforeDecoding() throws {
        let png = try ImageIO.encodePNG(testImage())
        XCTAssertEqual(mediaErrorMessage { try ImageIO.decode(patchPNGSize(png, width: 40000, height: 300), name: "x.png") },
                       "image 'x.png': 40000×300 is larger than the renderer's limit of 16384 pixels per side")
        XCTAssertEqual(mediaErrorMessage { try ImageIO.decode(png, name: "x.png", maxDimension: 6) },
                       "image 'x.png': 7×5 is larger than the renderer's limit of 6 pixels per side")
        XCTAssertEqual(mediaErrorMessage { try ImageIO.decode(png, name: "x.png", maxPixels: 34) },
                       "image 'x.png': 7×5 is larger than the renderer's limit of 34 pixels")
        // A JPEG whose SOF claims 60000 rows.
        let path = scratch.file("p.jpg")
        try makeImage([UInt8](repeating: 7, count: 64), width: 8, height: 8, map: "gray", at: path, options: [])
        var jpeg = try readBytes(path)
        let sof = (0..<jpeg.count - 1).first { jpeg[$0] == 0xFF && (jpeg[$0 + 1] == 0xC0 || jpeg[$0 + 1] == 0xC2) }!
        jpeg[sof + 5] = 0xEA; jpeg[sof + 6] = 0x60  // height 60000
        XCTAssertEqual(mediaErrorMessage { try ImageIO.decode(jpeg, name: "x.jpg") },
                       "image 'x.jpg': 8×60000 is larger than the renderer's limit of 16384 pixels per side")
    }

    // MARK: Inputs as viewers show them

    /// A JPEG whose APP1 segment says `Orientation = value` (byte order
    /// `II` or `MM`), inserted right after SOI.
    private func withOrientation(_ jpeg: [UInt8], _ value: UInt16, bigEndian: Bool = false) -> [UInt8] {
        func u16(_ v: UInt16) -> [UInt8] { bigEndian ? [UInt8(v >> 8), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func u32(_ v: UInt32) -> [UInt8] { bigEndian ? u16(UInt16(v >> 16)) + u16(UInt16(v & 0xFFFF)) : u16(UInt16(v & 0xFFFF)) + u16(UInt16(v >> 16)) }
        // An unrelated tag first (ImageWidth), then Orientation.
        var tiff: [UInt8] = (bigEndian ? [0x4D, 0x4D] : [0x49, 0x49]) + u16(42) + u32(8) + u16(2)
        tiff += u16(0x0100) + u16(4) + u32(1) + u32(99)
        tiff += u16(0x0112) + u16(3) + u32(1) + u16(value) + u16(0)
        tiff += u32(0)
        let body: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0] + tiff
        let length = body.count + 2
        return [0xFF, 0xD8, 0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + body + jpeg.dropFirst(2)
    }

    func testJPEGOrientationIsAppliedAsViewersShowIt() throws {
        // 40×30 in four flat quadrants: red (top-left), green (top-right),
        // blue (bottom-left), white (bottom-right); JPEG keeps flat areas.
        let path = scratch.file("q.png"), jpg = scratch.file("q.jpg")
        try convert(["-size", "40x30", "xc:white", "-fill", "red", "-draw", "rectangle 0,0 19,14",
                     "-fill", "lime", "-draw", "rectangle 20,0 39,14", "-fill", "blue", "-draw", "rectangle 0,15 19,29", path])
        try convert([path, "-quality", "95", jpg])
        let plain = try readBytes(jpg)
        enum Q { case red, green, blue, white }
        func quadrant(_ image: RGBAImage, _ x: Int, _ y: Int) -> Q? {
            let p = image.pixel(x, y)
            switch (p.r > 128, p.g > 128, p.b > 128) {
            case (true, false, false): return .red
            case (false, true, false): return .green
            case (false, false, true): return .blue
            case (true, true, true): return .white
            default: return nil
            }
        }
        // What each orientation shows in its top-left, top-right,
        // bottom-left, bottom-right corner (as a viewer turns the picture).
        let expected: [Int: (w: Int, h: Int, corners: [Q])] = [
            1: (40, 30, [.red, .green, .blue, .white]),
            2: (40, 30, [.green, .red, .white, .blue]),
            3: (40, 30, [.white, .blue, .green, .red]),
            4: (40, 30, [.blue, .white, .red, .green]),
            5: (30, 40, [.red, .blue, .green, .white]),
            6: (30, 40, [.blue, .red, .white, .green]),
            7: (30, 40, [.white, .green, .blue, .red]),
            8: (30, 40, [.green, .white, .red, .blue]),
        ]
        for bigEndian in [false, true] {
            for (value, want) in expected.sorted(by: { $0.key < $1.key }) {
                let image = try ImageIO.decode(withOrientation(plain, UInt16(value), bigEndian: bigEndian), name: "q.jpg")
                let label = "orientation \(value)\(bigEndian ? " MM" : " II")"
                XCTAssertEqual(image.width, want.w, label)
                XCTAssertEqual(image.height, want.h, label)
                let w = image.width, h = image.height
                XCTAssertEqual([quadrant(image, 3, 3), quadrant(image, w - 4, 3), quadrant(image, 3, h - 4), quadrant(image, w - 4, h - 4)],
                               want.corners, label)
            }
        }
        // A tag with an impossible value, or an IFD past the segment's end, reads as upright.
        XCTAssertEqual(try ImageIO.decode(withOrientation(plain, 9), name: "q.jpg"), try ImageIO.decode(plain, name: "q.jpg"))
        var cut = withOrientation(plain, 6)
        cut[16] = 0xE8; cut[17] = 0x03  // IFD0 at offset 1000, outside the segment
        XCTAssertEqual(try ImageIO.decode(cut, name: "q.jpg").width, 40)
    }

    func testAnAncillaryChunkThatClaimsMoreThanTheFileIsRefusedBeforeLibpngAllocatesIt() throws {
        // A tEXt chunk claiming 0x7fffffff bytes after IHDR (libpng would
        // allocate 2 GiB before finding the file too short).
        let png = try ImageIO.encodePNG(testImage())
        var lie = Array(png.prefix(33))
        lie += [0x7F, 0xFF, 0xFF, 0xFF] + Array("tEXt".utf8) + Array("Comment\0hello".utf8)
        XCTAssertEqual(mediaErrorMessage { try ImageIO.decode(lie, name: "x.png") },
                       "image 'x.png': truncated or corrupt PNG (chunk 'tEXt' claims 2147483647 bytes, the file has 9 left)")
        // Within the file but above the 8 MiB allowance.
        var big = Array(png.prefix(33))
        let size = (8 << 20) + 1
        big += [UInt8(size >> 24), UInt8((size >> 16) & 0xFF), UInt8((size >> 8) & 0xFF), UInt8(size & 0xFF)] + Array("zTXt".utf8)
        big += [UInt8](repeating: 0, count: size + 4) + Array(png.dropFirst(33))
        XCTAssertEqual(mediaErrorMessage { try ImageIO.decode(big, name: "x.png") },
                       "image 'x.png': truncated or corrupt PNG (chunk 'zTXt' claims 8388609 bytes, more than the 8 MiB allowed for it)")
        // A real text chunk is read as before.
        var text = Array(png.prefix(33))
        let body = Array("tEXt".utf8) + Array("Comment\0hello".utf8)
        text += [0, 0, 0, UInt8(body.count - 4)] + body
        let crc = crc32(body[...])
        text += [UInt8(crc >> 24), UInt8((crc >> 16) & 0xFF), UInt8((crc >> 8) & 0xFF), UInt8(crc & 0xFF)] + Array(png.dropFirst(33))
        XCTAssertEqual(try ImageIO.decode(text, name: "x.png"), testImage())
    }
}
