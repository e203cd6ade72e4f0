import Foundation
import XCTest
@testable import WobbleSystem
@testable import WobbleMedia
import WobbleCore
#if canImport(Glibc)
import Glibc
#endif

/// A PNG folder commit cut short (SIGKILL, a crash) between its renames is
/// undone by the next run that writes into the folder: the folder holds
/// exactly the old frames again, whatever prefix of the renames happened.
final class CommitRecoveryTests: XCTestCase {
    var scratch: Scratch!
    override func setUpWithError() throws { scratch = try Scratch() }
    override func tearDown() { scratch.remove() }

    /// A PID no process has.
    func deadPID() -> Int32 {
        var pid: Int32 = 4_000_000
        while kill(pid, 0) == 0 || errno != ESRCH { pid -= 1 }
        return pid
    }

    func contents(_ dir: String) throws -> [String: String] {
        var out: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: dir) {
            out[name] = (try? String(contentsOfFile: dir + "/" + name, encoding: .utf8)) ?? "<dir>"
        }
        return out
    }

    func testACommitCutShortIsUndoneByTheNextRun() throws {
        let frame = { (i: Int) in String(format: "frame_%05d.png", i) }
        // The steps of the commit, as renames: frame 0 by the fallback
        // (old aside, new in), frames 1-3 exchanged, frame 4 added, the
        // stale frame 9 moved aside.
        for cut in 0...7 {
            let t = scratch.file("frames\(cut)")
            try FileManager.default.createDirectory(atPath: t, withIntermediateDirectories: false)
            for i in 0..<4 { try "old\(i)".write(toFile: t + "/" + frame(i), atomically: false, encoding: .utf8) }
            try "stale".write(toFile: t + "/" + frame(9), atomically: false, encoding: .utf8)
            try "notes".write(toFile: t + "/notes.txt", atomically: false, encoding: .utf8)
            let before = try contents(t)

            let tempName = "\(TemporaryName.prefix)\(TemporaryName.machine)-\(deadPID())-1-1"
            XCTAssertTrue(TemporaryName.isLeftover(tempName))
            let dir = try Posix.open(t, O_RDONLY | O_DIRECTORY)
            defer { close(dir) }
            try Posix.mkdir(dir, tempName, 0o755, shown: t)
            let temp = try Posix.openat(dir, tempName, O_RDONLY | O_DIRECTORY, shown: t)
            defer { close(temp) }
            var inodes: [Int: UInt64] = [:]
            for i in 0..<5 {
                try "new\(i)".write(toFile: t + "/" + tempName + "/" + frame(i), atomically: false, encoding: .utf8)
                inodes[i] = UInt64(try XCTUnwrap(Posix.linkStatus(at: temp, frame(i), shown: "")).st_ino)
            }
            var entries: [CommitJournal.Entry] = (0..<4).map { .replace(name: frame($0), inode: inodes[$0] ?? 0, aside: ".old-\($0 + 1)") }
            entries.append(.add(name: frame(4), inode: inodes[4] ?? 0))
            entries.append(.stale(name: frame(9), aside: ".old-5"))
            try CommitJournal.write(entries, target: "", into: temp, shown: t)

            let steps: [() throws -> Void] = [
                { try Posix.rename(dir, frame(0), temp, ".old-1", flags: Posix.renameNoReplace, shown: "") },
                { try Posix.rename(temp, frame(0), dir, frame(0), flags: Posix.renameNoReplace, shown: "") },
                { try Posix.rename(temp, frame(1), dir, frame(1), flags: Posix.renameExchange, shown: "") },
                { try Posix.rename(temp, frame(2), dir, frame(2), flags: Posix.renameExchange, shown: "") },
                { try Posix.rename(temp, frame(3), dir, frame(3), flags: Posix.renameExchange, shown: "") },
                { try Posix.rename(temp, frame(4), dir, frame(4), flags: Posix.renameNoReplace, shown: "") },
                { try Posix.rename(dir, frame(9), temp, ".old-5", flags: Posix.renameNoReplace, shown: "") },
            ]
            for step in steps.prefix(cut) { try step() }

            TemporaryName.removeLeftovers(in: dir, shown: t)
            XCTAssertEqual(try contents(t), before, "cut after \(cut) renames")
        }
    }

    /// A run killed (SIGKILL) whose parent has not collected it yet is a
    /// zombie: its /proc entry stays, with its start time, but it writes
    /// nothing any more. Its temporary folder (PNG frames) and file are
    /// leftovers that the next run into the folder removes.
    func testLeftoversOfARunKilledButNotYetCollectedAreRemoved() throws {
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
        defer { for a in argv { free(a) } }
        XCTAssertEqual(posix_spawn(&pid, "/bin/true", nil, nil, argv, environ), 0)
        var status: Int32 = 0
        defer { waitpid(pid, &status, 0) }
        // It has exited but is not collected: state Z.
        var state = ""
        for _ in 0..<200 {
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
            state = stat.split(separator: ")").last?.split(separator: " ").first.map(String.init) ?? ""
            if state == "Z" { break }
            usleep(10_000)
        }
        XCTAssertEqual(state, "Z")
        let t = scratch.file("out")
        try FileManager.default.createDirectory(atPath: t, withIntermediateDirectories: false)
        let folder = "\(TemporaryName.prefix)\(TemporaryName.machine)-\(pid)-1-1"
        let file = "\(TemporaryName.prefix)\(TemporaryName.machine)-\(pid)-1-2"
        try FileManager.default.createDirectory(atPath: t + "/" + folder, withIntermediateDirectories: false)
        try "frame".write(toFile: t + "/" + folder + "/frame_00000.png", atomically: false, encoding: .utf8)
        try "gif".write(toFile: t + "/" + file, atomically: false, encoding: .utf8)
        // A live process's (this one's parent's) are never touched.
        let live = "\(TemporaryName.prefix)\(TemporaryName.machine)-\(getppid())-\(String(TemporaryName.startTime(getppid()) ?? 0, radix: 16))-1"
        try "live".write(toFile: t + "/" + live, atomically: false, encoding: .utf8)
        XCTAssertTrue(TemporaryName.isLeftover(folder))
        let dir = try Posix.open(t, O_RDONLY | O_DIRECTORY)
        defer { close(dir) }
        TemporaryName.removeLeftovers(in: dir, shown: t)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: t), [live])
    }

    func testJournalRoundTripsAnyName() throws {
        let odd = PathBytes.string([0x66, 0xFE, 0x0A, 0x20, 0x41])   // "f\xFE\n A"
        let entries: [CommitJournal.Entry] = [.replace(name: odd, inode: 7, aside: ".old-1"), .add(name: "a b", inode: 9),
                                              .stale(name: "x", aside: ".old-2")]
        let fd = try Posix.open(scratch.path, O_RDONLY | O_DIRECTORY)
        defer { close(fd) }
        try CommitJournal.write(entries, target: odd, into: fd, shown: "t")
        XCTAssertEqual(CommitJournal.read(fd), .plan(target: odd, entries: entries))
    }

    /// A journal whose names are not plain names in their folder (a path
    /// through a planted link, `..`, an aside that the commit never makes)
    /// is refused, never acted on; one cut short is nothing to undo.
    func testJournalRefusesNamesThatAreNotPlain() throws {
        let fd = try Posix.open(scratch.path, O_RDONLY | O_DIRECTORY)
        defer { close(fd) }
        func journal(_ text: String) throws -> CommitJournal.Reading {
            try? FileManager.default.removeItem(atPath: scratch.path + "/" + CommitJournal.name)
            try text.write(toFile: scratch.path + "/" + CommitJournal.name, atomically: false, encoding: .utf8)
            return CommitJournal.read(fd)
        }
        let h = { (s: String) in CommitJournal.hex(s) }
        for bad in ["d/victim", "../../victim", "..", ".", "", "a\u{0}b"] {
            guard case .refused = try journal("wobble-commit 1\nT \nR 5 \(h(bad)) \(h(".old-1"))\n") else {
                return XCTFail("R \(bad): not refused")
            }
            guard case .refused = try journal("wobble-commit 1\nT \nA 5 \(h(bad))\n") else { return XCTFail("A \(bad): not refused") }
            guard case .refused = try journal("wobble-commit 1\nT \nS \(h("f")) \(h(bad))\n") else { return XCTFail("S \(bad): not refused") }
        }
        guard case .refused = try journal("wobble-commit 1\nT \(h("../x"))\n") else { return XCTFail("target ../x") }
        guard case .refused = try journal("wobble-commit 1\nT \nR 5 \(h("f")) \(h("victim"))\n") else { return XCTFail("aside victim") }
        guard case .refused = try journal("wobble-commit 1\nT \nX 1\n") else { return XCTFail("unknown line") }
        XCTAssertEqual(try journal("wobble-commit 1\nT \nR 5 \(h("f")) \(h(".old-1"))\nA 6 66"), .nothing)
        XCTAssertEqual(try journal("wobble-commit 1\nT \nR 5 \(h("frame_00000.png")) \(h(".old-1"))\n"),
                       .plan(target: "", entries: [.replace(name: "frame_00000.png", inode: 5, aside: ".old-1")]))
    }
}
