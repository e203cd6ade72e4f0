import Foundation
import XCTest
import WobbleCore
import WobbleMedia

/// Inputs read as a viewer shows them: a phone photo whose EXIF says
/// "rotate 90° clockwise" is a portrait picture for `size()`, the frames
/// and `--image` alike.
final class ViewerOrientationTests: XCTestCase {
    /// A 40×30 JPEG (red left half, blue right half) tagged Orientation 6.
    private func sidewaysJPEG(in box: Sandbox, _ name: String) throws {
        let plain = box.path("plain.jpg")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/convert")
        p.arguments = ["-size", "40x30", "xc:blue", "-fill", "red", "-draw", "rectangle 0,0 19,29", "-quality", "95", plain]
        try p.run()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0)
        let jpeg = try [UInt8](Data(contentsOf: URL(fileURLWithPath: plain)))
        // APP1 Exif, little-endian TIFF, IFD0 with one entry: Orientation = 6.
        let tiff: [UInt8] = [0x49, 0x49, 42, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0]
        let body: [UInt8] = Array("Exif".utf8) + [0, 0] + tiff
        let app1: [UInt8] = [0xFF, 0xE1, 0, UInt8(body.count + 2)] + body
        try Data([0xFF, 0xD8] + app1 + jpeg.dropFirst(2)).write(to: URL(fileURLWithPath: box.path(name)))
    }

    func testAnEXIFOrientationSixPhotoIsUprightForSizeFramesAndImageOverride() throws {
        let box = try Sandbox()
        try sidewaysJPEG(in: box, "phone.jpg")
        try box.write("s.lua", """
        local w, h = image("phone.jpg")
        print(w, h, size())
        """)
        let r = try Tool.run(["s.lua", "--backend", "cpu", "-o", "o/"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdout, "30\t40\t30\t40\n")
        let frame = try ImageIO.load(path: box.path("o/frame_00000.png"))
        XCTAssertEqual([frame.width, frame.height], [30, 40])
        // Rotated clockwise: the red left half of the stored picture is now on top.
        XCTAssertGreaterThan(frame.pixel(15, 5).r, 200)
        XCTAssertLessThan(frame.pixel(15, 5).b, 60)
        XCTAssertGreaterThan(frame.pixel(15, 34).b, 200)
        XCTAssertLessThan(frame.pixel(15, 34).r, 60)

        // --image with the same photo on another scene: the same upright picture.
        try box.write("other.lua", "image('none.png')\nprint(size())\n")
        let o = try Tool.run(["other.lua", "--backend", "cpu", "--image", "phone.jpg", "-o", "p/"], cwd: box.url)
        XCTAssertEqual(o.status, 0, o.stderr)
        XCTAssertEqual(o.stdout, "30\t40\n")
        XCTAssertEqual(try ImageIO.load(path: box.path("p/frame_00000.png")), frame)
    }
}
