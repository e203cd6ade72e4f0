import Foundation
import XCTest
import WobbleCore
import WobbleMedia

/// End-to-end through the executable: `--width` output is the full-size
/// frames area-averaged, on both backends; the spring gallery scene checks.
final class MotionE2ETests: XCTestCase {
    var box: Sandbox!

    override func setUpWithError() throws {
        box = try Sandbox()
    }

    static var examples: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Examples").standardized
    }

    /// `img` area-averaged to `w × h` (partial pixels weighted by area).
    func areaAverage(_ img: RGBAImage, _ w: Int, _ h: Int) -> RGBAImage {
        let sx = Double(img.width) / Double(w), sy = Double(img.height) / Double(h)
        var out = RGBAImage(width: w, height: h)
        for j in 0 ..< h {
            for i in 0 ..< w {
                let x0 = Double(i) * sx, x1 = x0 + sx, y0 = Double(j) * sy, y1 = y0 + sy
                var acc = [0.0, 0, 0, 0]
                for y in Int(y0) ..< min(img.height, Int(y1.rounded(.up))) {
                    let wy = min(y1, Double(y + 1)) - max(y0, Double(y))
                    for x in Int(x0) ..< min(img.width, Int(x1.rounded(.up))) {
                        let wx = min(x1, Double(x + 1)) - max(x0, Double(x))
                        for c in 0 ..< 4 { acc[c] += wx * wy * Double(img.pixels[(y * img.width + x) * 4 + c]) }
                    }
                }
                for c in 0 ..< 4 { out.pixels[(j * w + i) * 4 + c] = UInt8(min(max((acc[c] / (sx * sy)).rounded(), 0), 255)) }
            }
        }
        return out
    }

    func psnr(_ a: RGBAImage, _ b: RGBAImage) -> Double {
        PSNR.of(a, b, channels: .rgba)
    }

    func testWidthOutputIsTheFullSizeFramesAreaAveraged() throws {
        // The spring gallery scene (a face and its nose on springs, the face
        // past the photo's edges), frames 20..28, at full size and --width 150.
        let scene = Self.examples.appendingPathComponent("springs/springs.lua").path
        for backend in ["cpu", "gles"] {
            let full = try Tool.run([scene, "--backend", backend, "--frames", "20-28", "-o", box.path("full-\(backend)") + "/", "-q"],
                                    cwd: box.url)
            XCTAssertEqual(full.status, 0, full.stderr)
            let small = try Tool.run([scene, "--backend", backend, "--frames", "20-28", "--width", "150",
                                      "-o", box.path("small-\(backend)") + "/", "-q"], cwd: box.url)
            XCTAssertEqual(small.status, 0, small.stderr)
            var worst = Double.infinity
            for k in 20 ... 28 {
                let name = String(format: "frame_%05d.png", k)
                let big = try ImageIO.load(path: box.path("full-\(backend)/\(name)"))
                let got = try ImageIO.load(path: box.path("small-\(backend)/\(name)"))
                XCTAssertEqual(got.width, 150)
                XCTAssertEqual(got.height, 100)
                let db = psnr(got, areaAverage(big, got.width, got.height))
                worst = min(worst, db)
                XCTAssertGreaterThanOrEqual(db, 35, "\(backend) frame \(k)")
            }
            print("--width 150 vs full size area-averaged (\(backend)): worst frame \(String(format: "%.1f", worst)) dB")
        }
    }

    func testSpringSceneErrorsAreOneLine() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 40, height: 30))
        let cases = [
            ("addSketch{motion = \"jelly\"}", "s.lua:2: addSketch: motion must be \"classic\" or \"spring\" (got \"jelly\")"),
            ("addSketch{motion = \"spring\", damping = 1}", "s.lua:2: addSketch: damping must be a number in [0, 1)"),
            ("overlap(\"last\")", "s.lua:2: overlap: mode must be \"sum\" or \"first\" (got \"last\")"),
            ("wait(0.1)\nedges(\"clamp\")", "s.lua:3: edges: the edge mode applies to the whole clip: set it before the first frame"),
        ]
        for (body, expected) in cases {
            try box.write("s.lua", "image('img.png')\n" + body + "\n")
            let r = try Tool.run(["s.lua", "--check"], cwd: box.url)
            XCTAssertEqual(r.status, 1, body)
            XCTAssertEqual(r.stderr.split(separator: "\n").first.map(String.init), expected, body)
        }
    }
}
