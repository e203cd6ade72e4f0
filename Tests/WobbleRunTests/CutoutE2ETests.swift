import Foundation
import XCTest
import WobbleCore
import WobbleMedia

/// `addSketch{cutout = ...}` and `wobble-run cutout` end to end:
/// bad masks are one line naming the scene's line with nothing written; the
/// mask the command writes is the one "auto" uses (the same frames); the
/// first frame is the source.
final class CutoutE2ETests: XCTestCase {
    var box: Sandbox!
    static let w = 120, h = 90

    /// A textured background with a bright disc (centre 60, 45, radius 22).
    static func picture() -> (RGBAImage, GreyMask) {
        var img = Sandbox.pattern(width: w, height: h, checker: 5)
        var mask = GreyMask(width: w, height: h)
        for y in 0..<h {
            for x in 0..<w {
                let dx = Double(x) + 0.5 - 60, dy = Double(y) + 0.5 - 45
                guard dx * dx + dy * dy <= 22 * 22 else { continue }
                let i = (y * w + x) * 4
                img.pixels[i] = 250; img.pixels[i + 1] = 240; img.pixels[i + 2] = 40 + UInt8(x % 4) * 10
                mask.pixels[y * w + x] = 255
            }
        }
        return (img, mask)
    }

    static func grey(_ m: GreyMask) -> RGBAImage {
        var img = RGBAImage(width: m.width, height: m.height)
        for (k, v) in m.pixels.enumerated() {
            img.pixels[k * 4] = v; img.pixels[k * 4 + 1] = v; img.pixels[k * 4 + 2] = v; img.pixels[k * 4 + 3] = 255
        }
        return img
    }

    override func setUpWithError() throws {
        box = try Sandbox()
        let (img, mask) = Self.picture()
        try box.writeImage("img.png", img)
        try box.writeImage("mask.png", Self.grey(mask))
        try box.writeImage("small.png", Self.grey(GreyMask(width: 60, height: 40, pixels: [UInt8](repeating: 255, count: 2400))))
        try box.writeImage("zero.png", Self.grey(GreyMask(width: Self.w, height: Self.h)))
        try box.writeImage("full.png", Self.grey(GreyMask(width: Self.w, height: Self.h, pixels: [UInt8](repeating: 255, count: Self.w * Self.h))))
        try box.writeImage("flat.png", RGBAImage(width: Self.w, height: Self.h, pixels: [UInt8](repeating: 180, count: Self.w * Self.h * 4)))
        try box.write("broken.png", "not a picture")
    }

    func scene(_ cutout: String, image: String = "img.png", rect: String = "x = 30, y = 15, w = 60, h = 60") -> String {
        """
        image("\(image)") fps(10)
        local s = addSketch{\(rect), pin = "bottom", cutout = \(cutout)}
        prepare() impulse(s, 1, 0) wait(0.5)
        """
    }

    func expectFailure(_ text: String, _ firstLine: String, file: StaticString = #filePath, line: UInt = #line) throws {
        try box.write("scene.lua", text)
        let before = box.files()
        for extra in [["--backend", "cpu", "-o", "out.gif"], ["--backend", "gles", "-o", "frames/"], ["--check"]] {
            let r = try Tool.run(["scene.lua"] + extra, cwd: box.url)
            XCTAssertEqual(r.status, 1, "\(extra): \(r.stderr)", file: file, line: line)
            XCTAssertEqual(r.firstError, firstLine, "\(extra)", file: file, line: line)
            XCTAssertEqual(box.files(), before, "\(extra): files appeared", file: file, line: line)
            XCTAssertEqual(box.leftovers(), [], file: file, line: line)
        }
    }

    func testEachBadInputIsOneLineNamingTheScenesLine() throws {
        try expectFailure(scene("\"small.png\""), "scene.lua:2: addSketch: cutout mask 'small.png' is 60×40, but the image is 120×90")
        try expectFailure(scene("\"broken.png\""), "scene.lua:2: addSketch: cutout mask 'broken.png': not a PNG or JPEG file")
        try expectFailure(scene("\"nowhere.png\""), "scene.lua:2: addSketch: cutout mask 'nowhere.png': no such file")
        try expectFailure(scene("\"zero.png\""), "scene.lua:2: addSketch: cutout mask 'zero.png' is all background (every pixel 0): nothing would move")
        try expectFailure(scene("\"auto\"", rect: "x = 80, y = 15, w = 60, h = 60"),
                          "scene.lua:2: addSketch: cutout = \"auto\": the region (box 80,15 to 140,75) reaches outside the 120×90 image")
        try expectFailure(scene("\"mask.png\"", rect: "x = -5, y = 15, w = 60, h = 60"),
                          "scene.lua:2: addSketch: cutout mask 'mask.png': the region (box -5,15 to 55,75) reaches outside the 120×90 image")
        // The disc's mask with a region beside the disc: nothing of it inside.
        try expectFailure(scene("\"mask.png\"", rect: "x = 0, y = 0, w = 20, h = 20"),
                          "scene.lua:2: addSketch: cutout mask 'mask.png' has no object inside the region (box 0,0 to 20,20): nothing would move")
        try expectFailure(scene("\"auto\"", rect: "x = 75, y = 15, w = 0, h = 0").replacingOccurrences(of: "pin = \"bottom\", ", with: ""),
                          "scene.lua:2: addSketch: cutout = \"auto\": the region (box 75,15 to 75,15) has no area: there is nothing to cut out")
        try expectFailure(scene("\"auto\"", image: "flat.png"),
                          "scene.lua:2: addSketch: cutout = \"auto\": the region is one uniform colour: there is no object to cut out")
        try expectFailure(scene("42"), "scene.lua:2: addSketch: cutout must be \"auto\" or a mask image's path (got number)")
    }

    /// `wobble-run cutout img.png` with `options`, twice (a.png, b.png):
    /// the same bytes both times; the intersection over union of a.png with
    /// the true disc.
    func commandMaskTwice(_ options: [String]) throws -> Double {
        for name in ["a.png", "b.png"] {
            let r = try Tool.run(["cutout", "img.png"] + options + ["-o", name], cwd: box.url)
            XCTAssertEqual(r.status, 0, r.stderr)
        }
        let a = try Data(contentsOf: box.url.appendingPathComponent("a.png"))
        XCTAssertEqual(a, try Data(contentsOf: box.url.appendingPathComponent("b.png")), "two runs, two different masks")
        let found = try ImageIO.load(path: box.path("a.png")), truth = Self.picture().1
        var inter = 0, union = 0
        for k in 0 ..< Self.w * Self.h {
            let p = found.pixels[k * 4] > 127, q = truth.pixels[k] > 127
            if p && q { inter += 1 }
            if p || q { union += 1 }
        }
        return Double(inter) / Double(union)
    }

    /// The command's mask is the one "auto" uses: the same bytes twice,
    /// close to the true disc, and a scene using it renders the frames
    /// "auto" renders, byte for byte; frame 0 is the source.
    func testCommandMaskIsWhatAutoUses() throws {
        XCTAssertGreaterThanOrEqual(try commandMaskTwice(["--box", "30,15,60,60"]), 0.9)

        try box.write("auto.lua", scene("\"auto\""))
        try box.write("file.lua", scene("\"a.png\""))
        for backend in ["cpu", "gles"] {
            XCTAssertEqual(try Tool.run(["auto.lua", "--backend", backend, "-o", "auto-\(backend)/"], cwd: box.url).status, 0)
            XCTAssertEqual(try Tool.run(["file.lua", "--backend", backend, "-o", "file-\(backend)/"], cwd: box.url).status, 0)
            let frames = try box.list("auto-\(backend)")
            XCTAssertEqual(frames, try box.list("file-\(backend)"))
            XCTAssertEqual(frames.count, 5)
            for f in frames {
                XCTAssertEqual(try Data(contentsOf: box.url.appendingPathComponent("auto-\(backend)/\(f)")),
                               try Data(contentsOf: box.url.appendingPathComponent("file-\(backend)/\(f)")), "\(backend) \(f)")
            }
            // Frame 0 (prepared, not moved yet) is the source.
            let first = try ImageIO.load(path: box.path("auto-\(backend)/\(frames[0])"))
            XCTAssertEqual(first, try ImageIO.load(path: box.path("img.png")), backend)
            let moving = try ImageIO.load(path: box.path("auto-\(backend)/\(frames[2])"))
            XCTAssertNotEqual(moving, first, backend)
        }
    }

    /// One rule for every mask: "auto" with a box over the whole picture
    /// rendered, while the same mask from `wobble-run cutout` (and any mask
    /// file that is all object) was refused ("no background would stay").
    /// Both render now, the same frames; a mask that is all background is
    /// refused from a file and in the studio alike.
    func testAWholePictureMaskRendersFromAutoAndFromTheCommand() throws {
        let whole = "x = 0, y = 0, w = 120, h = 90"
        let cut = try Tool.run(["cutout", "img.png", "--box", "0,0,120,90", "-o", "whole.png"], cwd: box.url)
        XCTAssertEqual(cut.status, 0, cut.stderr)
        try box.write("auto.lua", scene("\"auto\"", rect: whole))
        try box.write("file.lua", scene("\"whole.png\"", rect: whole))
        try box.write("full.lua", scene("\"full.png\"", rect: whole))
        for name in ["auto", "file", "full"] {
            let r = try Tool.run(["\(name).lua", "--backend", "cpu", "-o", "\(name)/"], cwd: box.url)
            XCTAssertEqual(r.status, 0, "\(name): \(r.stderr)")
            XCTAssertEqual(try box.list(name).count, 5, name)
        }
        for f in try box.list("auto") {
            XCTAssertEqual(try Data(contentsOf: box.url.appendingPathComponent("auto/\(f)")),
                           try Data(contentsOf: box.url.appendingPathComponent("file/\(f)")), f)
        }
        // The whole picture moves: a frame differs from the source.
        let moving = try ImageIO.load(path: box.path("full/\(try box.list("full")[2])"))
        XCTAssertNotEqual(moving, try ImageIO.load(path: box.path("img.png")))
        try expectFailure(scene("\"zero.png\"", rect: whole), "scene.lua:2: addSketch: cutout mask 'zero.png' is all background (every pixel 0): nothing would move")
    }

    /// `--at X,Y`: the object a studio Shift+click there finds first (the
    /// disc), the same bytes twice; a point outside the photo, a malformed
    /// point, or both --box and --at: one line, nothing written.
    func testCommandAtAPointWritesWhatAShiftClickFindsFirst() throws {
        let iou = try commandMaskTwice(["--at", "60,45"])
        print("cutout --at 60,45: IoU \(String(format: "%.3f", iou)) with the disc")
        XCTAssertGreaterThanOrEqual(iou, 0.9)

        let outside = try Tool.run(["cutout", "img.png", "--at", "130,10", "-o", "m.png"], cwd: box.url)
        XCTAssertEqual(outside.status, 1)
        XCTAssertEqual(outside.firstError, "wobble-run: cutout: --at 130,10: the point is outside the 120×90 image")
        // A picture smaller than a click's smallest square: said as such (not "outside").
        try box.writeImage("tiny.png", Sandbox.pattern(width: 7, height: 40))
        let tiny = try Tool.run(["cutout", "tiny.png", "--at", "3,20", "-o", "m.png"], cwd: box.url)
        XCTAssertEqual(tiny.status, 1)
        XCTAssertEqual(tiny.firstError, "wobble-run: cutout: --at 3,20: a click looks for an object in squares of at least 8×8 pixels and the picture is 7×40: mark the object with a box or a region instead")
        let bad = try Tool.run(["cutout", "img.png", "--at", "60", "-o", "m.png"], cwd: box.url)
        XCTAssertEqual(bad.status, 2)
        XCTAssertEqual(bad.firstError, "wobble-run: cutout: --at must be X,Y in pixels (got '60')")
        let hex = try Tool.run(["cutout", "img.png", "--at", "0x10,5", "-o", "m.png"], cwd: box.url)
        XCTAssertEqual(hex.status, 2)
        XCTAssertEqual(hex.firstError, "wobble-run: cutout: --at must be X,Y in pixels (got '0x10,5')")
        let both = try Tool.run(["cutout", "img.png", "--at", "60,45", "--box", "30,15,60,60", "-o", "m.png"], cwd: box.url)
        XCTAssertEqual(both.status, 2)
        XCTAssertTrue(both.firstError.hasPrefix("wobble-run: cutout: --box and --at: give one ("), both.firstError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("m.png")))
    }

    /// A click on a small object (the cat's cheek, left of her eye, her
    /// chin: candidates of 140–700 pixels) writes that object: the matte,
    /// which solved such a small band all to background (an all-black mask
    /// and status 0), keeps it as found when it would keep under half.
    func testCommandAtASmallObjectWritesItNotAnEmptyMask() throws {
        let photo = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Examples/cat/chelsea.png").standardized.path
        for point in ["112,150", "130,170", "338,150", "225,294"] {
            let r = try Tool.run(["cutout", photo, "--at", point, "-o", "m.png"], cwd: box.url)
            XCTAssertEqual(r.status, 0, r.stderr)
            let mask = try ImageIO.load(path: box.path("m.png"))
            let object = (0..<(mask.width * mask.height)).filter { mask.pixels[$0 * 4] > 127 }.count
            XCTAssertGreaterThanOrEqual(object, 100, "--at \(point): \(object) object pixels")
            XCTAssertLessThan(object, mask.width * mask.height / 10, "--at \(point): a small object")
        }
    }

    func testCommandRefusesABoxOutsideThePhoto() throws {
        let r = try Tool.run(["cutout", "img.png", "--box", "100,10,40,40", "-o", "m.png"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.firstError, "wobble-run: cutout: --box 100,10,40,40: the region (box 100,10 to 140,50) reaches outside the 120×90 image")
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("m.png")))
        let u = try Tool.run(["cutout", "img.png"], cwd: box.url)
        XCTAssertEqual(u.status, 2)
        // X + W past the largest integer: the same kind of line, not a trap.
        let huge = try Tool.run(["cutout", "img.png", "--box", "1,1,9223372036854775807,1", "-o", "m.png"], cwd: box.url)
        XCTAssertEqual(huge.status, 1)
        XCTAssertEqual(huge.firstError, "wobble-run: cutout: --box 1,1,9223372036854775807,1: the box reaches outside the 120×90 image")
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("m.png")))
    }

    /// The mask is an 8-bit greyscale PNG, named .png; the options are
    /// read as options (once each, `--` ending them), never as values.
    func testCommandWritesAGreyPNGAndReadsItsOptionsStrictly() throws {
        let r = try Tool.run(["cutout", "--box", "30,15,60,60", "-o", "m.png", "--", "img.png"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        let bytes = [UInt8](try Data(contentsOf: box.url.appendingPathComponent("m.png")))
        // IHDR: bit depth 8 (byte 24), colour type 0, greyscale (byte 25).
        XCTAssertEqual(Array(bytes[12 ..< 16]), Array("IHDR".utf8))
        XCTAssertEqual(bytes[24], 8)
        XCTAssertEqual(bytes[25], 0)
        let mask = try ImageIO.load(path: box.path("m.png"))
        XCTAssertEqual(mask.width, Self.w)
        XCTAssertEqual(Set(stride(from: 3, to: mask.pixels.count, by: 4).map { mask.pixels[$0] }), [255])

        let jpg = try Tool.run(["cutout", "img.png", "--box", "30,15,60,60", "-o", "m.jpg"], cwd: box.url)
        XCTAssertEqual(jpg.status, 2)
        XCTAssertEqual(jpg.firstError, "wobble-run: cutout: -o 'm.jpg': a mask is a PNG file: name it with .png")
        let helpAsValue = try Tool.run(["cutout", "img.png", "--box", "30,15,60,60", "-o", "--help"], cwd: box.url)
        XCTAssertEqual(helpAsValue.status, 2)
        XCTAssertEqual(helpAsValue.firstError, "wobble-run: cutout: -o '--help': a mask is a PNG file: name it with .png")
        XCTAssertEqual(helpAsValue.stdout, "")
        let twice = try Tool.run(["cutout", "img.png", "--box", "30,15,60,60", "--box", "1,1,2,2", "-o", "n.png"], cwd: box.url)
        XCTAssertEqual(twice.status, 2)
        XCTAssertTrue(twice.firstError.hasPrefix("wobble-run: cutout: --box is given twice ("), twice.firstError)
        for name in ["m.jpg", "--help", "n.png"] {
            XCTAssertFalse(FileManager.default.fileExists(atPath: box.path(name)), name)
        }
    }

    /// A looping, pinned cutout: both backends render every frame within
    /// 38 dB of each other, and the object moves in the loop's first frame
    /// (the steady state).
    func testALoopingPinnedCutoutInBothBackends() throws {
        try box.write("loop.lua", """
        image("img.png") fps(10) loop()
        local s = addSketch{x = 30, y = 15, w = 60, h = 60, pin = "bottom", cutout = "mask.png", motion = "spring", duration = 0.4}
        prepare() impulse(s, 1, 0) wait(0.8)
        """)
        for backend in ["cpu", "gles"] {
            let r = try Tool.run(["loop.lua", "--backend", backend, "-o", "\(backend)/"], cwd: box.url)
            XCTAssertEqual(r.status, 0, r.stderr)
        }
        let frames = try box.list("cpu")
        XCTAssertEqual(frames.count, 8)
        let source = try ImageIO.load(path: box.path("img.png"))
        for f in frames {
            let a = try ImageIO.load(path: box.path("cpu/\(f)")), b = try ImageIO.load(path: box.path("gles/\(f)"))
            var sum = 0.0
            for (x, y) in zip(a.pixels, b.pixels) { sum += Double((Int(x) - Int(y)) * (Int(x) - Int(y))) }
            let db = sum == 0 ? Double.infinity : 10 * log10(255 * 255 / (sum / Double(a.pixels.count)))
            XCTAssertGreaterThanOrEqual(db, 38, f)
        }
        XCTAssertNotEqual(try ImageIO.load(path: box.path("cpu/\(frames[0])")), source)
    }
}
