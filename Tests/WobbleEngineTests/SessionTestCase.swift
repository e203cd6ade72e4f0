import Foundation
import XCTest
import WobbleTestSupport
import WobbleEngine
import WobbleCore
import WobbleMedia

/// The fixture of the session tests: a fresh folder with the image the
/// scenes load (`img.png`, `image()`: a 40×30 gradient unless a test class
/// says otherwise), removed afterwards.
class SessionTestCase: XCTestCase {
    /// The test's temporary folder (removed after it).
    private var box: Sandbox!
    var dir: URL!

    /// The picture written as `img.png` before each test.
    func image() -> RGBAImage {
        var px = [UInt8](repeating: 255, count: 40 * 30 * 4)
        for i in 0..<(40 * 30) { px[i * 4] = UInt8(i % 40 * 6); px[i * 4 + 1] = UInt8(i / 40 * 8) }
        return RGBAImage(width: 40, height: 30, pixels: px)
    }

    override func setUpWithError() throws {
        box = try Sandbox()
        dir = box.url
        try ImageIO.writePNG(image(), to: dir.appendingPathComponent("img.png").path)
    }

    override func tearDownWithError() throws {
        box = nil
    }

    /// Writes `text` as `scene.lua` in the folder; its path.
    func scene(_ text: String) throws -> String {
        let p = dir.appendingPathComponent("scene.lua").path
        try text.write(toFile: p, atomically: true, encoding: .utf8)
        return p
    }
}

extension LiveSession {
    /// Adds performed events and runs the scene again, as the studio does
    /// (`setPerformed`, then `run`): false when the run failed.
    func performing(_ events: [PerformedEvent]) -> Bool {
        setPerformed(performed + events)
        return run()
    }
}
