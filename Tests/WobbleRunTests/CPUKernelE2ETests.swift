import Foundation
import WobbleSystem
import XCTest

/// The CPU backend's C row kernel end to end: every gallery scene renders
/// the same PNG frames with the kernel at this CPU's best level (the
/// default), with the baseline x86-64 build forced (`WOBBLE_CPU=baseline`,
/// what a CPU without AVX2 runs), with the AVX2 build forced
/// (`WOBBLE_CPU=avx2`, what a CPU without AVX-512 runs) and with the Swift
/// reference kernel
/// (`WOBBLE_CPU=swift`); at the image's size (the rows drawn into the
/// frame) and at a smaller width (the rows drawn at the image's size and
/// area-averaged).
final class CPUKernelE2ETests: XCTestCase {
    var box: Sandbox!

    override func setUpWithError() throws { box = try Sandbox() }

    /// The gallery's scene files.
    var scenes: [String] {
        let dir = RegionFramesE2ETests.examples.path
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        return names.sorted().compactMap { name in
            let files = (try? FileManager.default.contentsOfDirectory(atPath: "\(dir)/\(name)")) ?? []
            return files.first { $0.hasSuffix(".lua") }.map { "\(dir)/\(name)/\($0)" }
        }
    }

    /// The PNG frames of `args` (names and bytes joined) with `WOBBLE_CPU`
    /// set to `cpu` (unset for nil).
    func frames(_ args: [String], cpu: String?, file: StaticString = #filePath, line: UInt = #line) throws -> Data {
        var env = ProcessInfo.processInfo.environment
        env["WOBBLE_CPU"] = cpu
        let path = box.path("frames-\(cpu ?? "best")-\(UUID().uuidString)") + "/"
        let r = try Tool.exec(Tool.executable.path, args + ["-q", "-o", path], cwd: box.url, env: env)
        XCTAssertEqual(r.status, 0, "\(args): \(r.stderr)", file: file, line: line)
        var joined = Data()
        for name in try FileManager.default.contentsOfDirectory(atPath: path).sorted() {
            joined.append(Data(name.utf8))
            joined.append(try Data(contentsOf: URL(fileURLWithPath: path + name)))
        }
        return joined
    }

    func testGalleryIsTheSameOnEveryKernel() throws {
        XCTAssertGreaterThanOrEqual(scenes.count, 9)
        for (k, scene) in scenes.enumerated() {
            // Frames 15-17: every scene's regions move there.
            for width in k % 3 == 0 ? [nil, "96"] : ["96"] {
                let args = [scene, "--backend", "cpu", "--frames", "15-17"] + (width.map { ["--width", $0] } ?? [])
                let best = try frames(args, cpu: nil)
                XCTAssertGreaterThan(best.count, 0, "\(args)")
                let baseline = try frames(args, cpu: "baseline"), avx2 = try frames(args, cpu: "avx2")
                let swift = try frames(args, cpu: "swift")
                XCTAssertTrue(best == swift, "\(args): the C kernel's frames differ from the Swift kernel's")
                XCTAssertTrue(baseline == swift, "\(args): the baseline C kernel's frames differ from the Swift kernel's")
                XCTAssertTrue(avx2 == swift, "\(args): the AVX2 C kernel's frames differ from the Swift kernel's")
            }
        }
    }
}
