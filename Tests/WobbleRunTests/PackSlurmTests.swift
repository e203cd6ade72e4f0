import Foundation
import XCTest

/// The pack on a real job scheduler: Scripts/slurm-pack.sh starts a
/// single-node Slurm (munged, slurmctld, slurmd), submits the pack as a
/// job array of `wobble-run pack --slice auto`, and compares every output
/// byte for byte with one local run. Skipped, with the script's reason,
/// where the machine cannot (not root, Slurm or munge not installed, the
/// daemons do not start).
final class PackSlurmTests: XCTestCase {
    func testAPackAsASlurmJobArrayMakesTheSameBytesAsOneRun() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized
        let script = root.appendingPathComponent("Scripts/slurm-pack.sh").path
        var env = ProcessInfo.processInfo.environment
        env["WOBBLE_RUN"] = Tool.executable.path
        env["ROWS"] = "6"
        env["TASKS"] = "4"
        let r = try Tool.exec(script, [], cwd: root, env: env)
        let lines = r.stderr.split(separator: "\n").map(String.init)
        if r.status == 77 { throw XCTSkip(lines.last ?? "slurm-pack.sh: skipped") }
        XCTAssertEqual(r.status, 0, r.stderr)
        let said = String(decoding: r.stdout, as: UTF8.self)
        XCTAssertTrue(said.contains("Slurm array of 4 tasks") && said.hasSuffix("outputs byte-identical\n"), said + r.stderr)
    }
}
