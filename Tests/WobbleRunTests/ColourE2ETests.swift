import Foundation
import XCTest
import WobbleCore
import WobbleMedia

/// Colour through the built executable: a photo with a profile comes out
/// in sRGB as a colour-managed viewer shows it, in files that say sRGB; a
/// broken profile is one warning line (ColourTests holds every kind of
/// input against Pillow's ImageCms in process).
final class ColourE2ETests: XCTestCase {
    var box: Sandbox!

    override func setUpWithError() throws {
        guard let py = FormatsTests.python,
              (try? Tool.exec(py, ["-c", "from PIL import ImageCms; import numpy"]))?.status == 0 else {
            throw XCTSkip("Pillow's ImageCms and numpy (python3-pil, python3-numpy) are needed for the references")
        }
        box = try Sandbox()
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Scripts/colour-fixtures.py").standardized.path
        let r = try Tool.exec(py, [script, box.path])
        XCTAssertEqual(r.status, 0, r.stderr)
    }

    override func tearDown() { box = nil }

    /// The chunk types of a PNG file, in order, up to the first `IDAT`.
    func chunks(_ path: String) throws -> [String] {
        let b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var out: [String] = [], i = 8
        while i + 8 <= b.count {
            let length = Int(b[i]) << 24 | Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3])
            let type = String(decoding: b[(i + 4)..<(i + 8)], as: UTF8.self)
            out.append(type)
            if type == "IDAT" { break }
            i += 12 + length
        }
        return out
    }

    func psnr(_ a: RGBAImage, _ b: RGBAImage) -> Double {
        XCTAssertEqual([a.width, a.height], [b.width, b.height])
        return PSNR.of(a, b, channels: .rgb)
    }

    func testAdobeRGBPhotoComesOutSRGBInPNGAndAPNG() throws {
        try box.write("s.lua", "image(\"adobe-rgb.jpg\")\n")
        for (name, format) in [("out.png", "png"), ("out.apng", "apng")] {
            let r = try Tool.run(["s.lua", "--backend", "cpu", "-q", "-o", name, "--format", format], cwd: box.url)
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertEqual(r.stderr, "")
            let types = try chunks(box.path(name))
            XCTAssertEqual(types.first, "IHDR")
            XCTAssertEqual(types.filter { $0 == "sRGB" }.count, 1, "\(name): \(types)")
            XCTAssertFalse(types.contains("iCCP") || types.contains("gAMA"), "\(name): \(types)")
        }
        let quality = psnr(try ImageIO.load(path: box.path("out.png")), try ImageIO.load(path: box.path("adobe-rgb.ref.png")))
        XCTAssertGreaterThanOrEqual(quality, 40, "\(quality) dB against ImageCms")
    }

    /// Every kind of tagged input, rendered by the executable, against ImageCms.
    func testEveryKindOfProfileThroughTheExecutable() throws {
        let kinds = ["adobe-rgb.jpg", "display-p3.jpg", "prophoto.jpg", "split-app2.jpg", "iccp.png", "gama-chrm.png",
                     "cmyk-adobe.jpg", "cmyk-plain.jpg"]
        for file in kinds {
            let name = String(file.prefix { $0 != "." })
            try box.write("\(name).lua", "image(\"\(file)\")\n")
            let r = try Tool.run(["\(name).lua", "--backend", "cpu", "-q", "-o", "\(name).out.png"], cwd: box.url)
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertEqual(r.stderr, "", file)
            let quality = psnr(try ImageIO.load(path: box.path("\(name).out.png")), try ImageIO.load(path: box.path("\(name).ref.png")))
            XCTAssertGreaterThanOrEqual(quality, 40, "\(file): \(quality) dB against ImageCms")
        }
    }

    func testBrokenProfileIsOneWarningLine() throws {
        try box.write("s.lua", "image(\"broken.jpg\")\n")
        let r = try Tool.run(["s.lua", "--backend", "cpu", "-q", "-o", "out.png", "--json"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        let line = "image 'broken.jpg': its ICC profile is damaged; the pixels are used as they are"
        XCTAssertEqual(r.stderr.split(separator: "\n").map(String.init), ["wobble-run: warning: " + line])
        XCTAssertTrue(r.stdout.contains("\"warnings\":[\"\(line)\"]"), r.stdout)
        // The pixels as stored: the same picture without its profile.
        try box.write("u.lua", "image(\"untagged.jpg\")\n")
        XCTAssertEqual(try Tool.run(["u.lua", "--backend", "cpu", "-q", "-o", "u.png"], cwd: box.url).status, 0)
        XCTAssertEqual(try ImageIO.load(path: box.path("out.png")), try ImageIO.load(path: box.path("u.png")))
    }
}
