import CGIF
import Foundation
import WobbleCore
import WobbleMedia
import WobbleSystem
import XCTest

/// Transparent edges: a white disc on transparency, with another colour
/// stored under its fully transparent pixels (as exported PNGs often have).
/// Sampling is on premultiplied values, so no visible output pixel takes any
/// colour from the hidden one, in either backend, in PNG frames and in GIFs.
final class TransparentEdgeTests: XCTestCase {
    var box: Sandbox!

    override func setUpWithError() throws {
        box = try Sandbox()
    }

    /// A 64×64 white disc of radius 22 with a one-pixel antialiased edge;
    /// outside it alpha 0 over `hidden`.
    static func disc(hidden: (UInt8, UInt8, UInt8)) -> RGBAImage {
        var img = RGBAImage(width: 64, height: 64)
        for y in 0 ..< 64 {
            for x in 0 ..< 64 {
                let d = ((Double(x) + 0.5 - 32) * (Double(x) + 0.5 - 32) + (Double(y) + 0.5 - 32) * (Double(y) + 0.5 - 32)).squareRoot()
                let a = min(max(22.5 - d, 0), 1)
                let i = (y * 64 + x) * 4
                let white = a > 0
                img.pixels[i] = white ? 255 : hidden.0
                img.pixels[i + 1] = white ? 255 : hidden.1
                img.pixels[i + 2] = white ? 255 : hidden.2
                img.pixels[i + 3] = UInt8((a * 255).rounded())
            }
        }
        return img
    }

    static let scene = """
    image("disc.png")
    addSketch{x = 4, y = 4, w = 56, h = 56, strength = 0.2}
    prepare()
    impulse(1, 1, 0.4)
    wait(0.6)
    """

    /// The visible pixels of `img` (alpha > 0) that are not white, as text.
    static func tinted(_ img: RGBAImage) -> [String] {
        var out: [String] = []
        for y in 0 ..< img.height {
            for x in 0 ..< img.width {
                let p = img.pixel(x, y)
                if p.a > 0 && (p.r, p.g, p.b) != (255, 255, 255) { out.append("(\(x),\(y)) \(p)") }
            }
        }
        return out
    }

    /// The colours GIF frames show (every pixel not transparent, in every
    /// image), with the number of images.
    func gifVisibleColours(_ path: String) throws -> (images: Int, colours: Set<[UInt8]>) {
        var err: Int32 = 0
        guard let gif = DGifOpenFileName(path, &err) else { throw MediaError("DGifOpenFileName: \(err)") }
        defer { DGifCloseFile(gif, &err) }
        guard DGifSlurp(gif) == GIF_OK else { throw MediaError("DGifSlurp: \(gif.pointee.Error)") }
        var colours = Set<[UInt8]>()
        for k in 0 ..< Int(gif.pointee.ImageCount) {
            let image = gif.pointee.SavedImages[k]
            var gcb = GraphicsControlBlock()
            let transparent = DGifSavedExtensionToGCB(gif, Int32(k), &gcb) == GIF_OK ? Int(gcb.TransparentColor) : -1
            guard let map = image.ImageDesc.ColorMap ?? gif.pointee.SColorMap else { continue }
            let n = Int(image.ImageDesc.Width) * Int(image.ImageDesc.Height)
            for i in 0 ..< n {
                let index = Int(image.RasterBits[i])
                guard index != transparent else { continue }
                let c = map.pointee.Colors[index]
                colours.insert([c.Red, c.Green, c.Blue])
            }
        }
        return (Int(gif.pointee.ImageCount), colours)
    }

    func testAMovingDiscShowsNoHiddenColourInEitherBackendPNGOrGIF() throws {
        try box.write("s.lua", TransparentEdgeTests.scene)
        for (name, hidden) in [("magenta", (UInt8(255), UInt8(0), UInt8(255))), ("black", (UInt8(0), UInt8(0), UInt8(0)))] {
            let source = TransparentEdgeTests.disc(hidden: hidden)
            try box.writeImage("disc.png", source)
            for backend in ["cpu", "gles"] {
                let dir = "\(name)-\(backend)/"
                var r = try Tool.run(["s.lua", "--backend", backend, "-q", "-o", dir], cwd: box.url)
                XCTAssertEqual(r.status, 0, r.stderr)
                var edgeFramesThatMoved = 0
                for k in 0 ..< 18 {
                    let frame = try ImageIO.load(path: box.path(dir + String(format: "frame_%05d.png", k)))
                    let bad = TransparentEdgeTests.tinted(frame)
                    XCTAssertTrue(bad.isEmpty, "\(name) \(backend) frame \(k): \(bad.count) visible pixels not white: \(bad.prefix(4))")
                    if frame != source { edgeFramesThatMoved += 1 }
                }
                XCTAssertGreaterThan(edgeFramesThatMoved, 10, "\(name) \(backend): the disc does not move")
                // Downscaled (area-averaged), the same holds.
                r = try Tool.run(["s.lua", "--backend", backend, "-q", "--width", "40", "-o", "small-" + dir], cwd: box.url)
                XCTAssertEqual(r.status, 0, r.stderr)
                for k in [0, 3, 9] {
                    let frame = try ImageIO.load(path: box.path("small-" + dir + String(format: "frame_%05d.png", k)))
                    XCTAssertEqual(frame.width, 40)
                    let bad = TransparentEdgeTests.tinted(frame)
                    XCTAssertTrue(bad.isEmpty, "\(name) \(backend) --width 40 frame \(k): \(bad.prefix(4))")
                }
                r = try Tool.run(["s.lua", "--backend", backend, "-q", "-o", "\(name)-\(backend).gif"], cwd: box.url)
                XCTAssertEqual(r.status, 0, r.stderr)
                let gif = try gifVisibleColours(box.path("\(name)-\(backend).gif"))
                XCTAssertEqual(gif.images, 18)
                let off = gif.colours.filter { $0.contains { $0 < 250 } }
                XCTAssertTrue(off.isEmpty, "\(name) \(backend) GIF: visible colours \(off.sorted { $0.lexicographicallyPrecedes($1) })")
            }
        }
    }
}
