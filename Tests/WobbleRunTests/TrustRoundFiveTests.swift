import Foundation
import XCTest
import WobbleCore
import WobbleMedia
import WobbleSystem

/// A hostile round on the built binary and the docs: the script's `arg`
/// carries the exact bytes, a stop names one position, leftovers of a run
/// killed but not yet collected go, warnings that say what is wrong, and
/// every anchor a doc links to exists.
final class TrustRoundFiveTests: XCTestCase {
    var box: Sandbox!

    override func setUpWithError() throws {
        box = try Sandbox()
        try box.writeImage("img.png", Sandbox.pattern(width: 150, height: 100))
    }

    override func tearDown() { box = nil }

    /// Runs `wobble-run` through `sh -c` (so arguments can be any bytes,
    /// written with printf): `"$W"` is the executable.
    func shell(_ command: String) throws -> (status: Int32, stdout: [UInt8], stderr: String) {
        let r = try Tool.exec("/bin/sh", ["-c", "W=\"$1\"; " + command, "sh", Tool.executable.path], cwd: box.url)
        return (r.status, Array(r.stdout), r.stderr)
    }

    /// Tab, newline, ESC, 0x01 and 0xFF after `--`: each one byte in
    /// `arg[i]`, as in `...` (they were the 4 bytes of U+10FF09 …).
    func testArgHoldsTheArgumentsExactBytes() throws {
        try box.write("a.lua", """
            local out = {}
            for i = 1, #arg do
              out[#out + 1] = #arg[i] .. ":" .. table.concat({arg[i]:byte(1, -1)}, ",")
              assert(arg[i] == select(i, ...), "arg and ... differ")
            end
            print(table.concat(out, " "))
            image("img.png")
            """)
        let r = try shell("\"$W\" a.lua --check -q -- \"$(printf 'a\\tb')\" \"$(printf 'a\\nb')\" \"$(printf 'a\\033b')\" \"$(printf 'a\\001b')\" \"$(printf 'a\\377b')\"")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(String(decoding: r.stdout, as: UTF8.self), "3:97,9,98 3:97,10,98 3:97,27,98 3:97,1,98 3:97,255,98\n")
        // A message naming such a string shows the byte as documented.
        try box.write("i.lua", "image(arg[1])\n")
        let m = try shell("\"$W\" i.lua --check -- \"$(printf 'new\\nline.gif')\"")
        XCTAssertEqual(m.status, 1)
        XCTAssertEqual(m.stderr.split(separator: "\n").first.map(String.init), "i.lua:1: image: image 'new\\x0Aline.gif': no such file")
        // arg[0], the script's path, is its bytes too.
        try box.write("z.lua", "print(#arg[0], arg[0]:byte(-5))\nimage('img.png')\n")
        let z = try shell("cp z.lua \"$(printf 'z\\377.lua')\" && \"$W\" \"$(printf 'z\\377.lua')\" --check -q")
        XCTAssertEqual(z.status, 0, z.stderr)
        XCTAssertEqual(String(decoding: z.stdout, as: UTF8.self), "6\t255\n")
    }

    /// A runaway loop in a coroutine: `coroutine.wrap` put its caller's
    /// position in front again (`c.lua:2: c.lua:2: script timed out`).
    func testATimeoutInACoroutineNamesOnePosition() throws {
        try box.write("c.lua", "image('img.png')\ncoroutine.wrap(function() while true do end end)()\n")
        let r = try Tool.run(["c.lua", "--check", "--timeout", "0.5"], cwd: box.url)
        XCTAssertEqual(r.stderr.split(separator: "\n").first.map(String.init), "c.lua:2: script timed out after 0.5 s (--timeout)")
        try box.write("d.lua", """
            image('img.png')
            local spin = coroutine.wrap(function()
              while true do end
            end)
            local outer = coroutine.wrap(function() spin() end)
            outer()
            """)
        let d = try Tool.run(["d.lua", "--check", "--timeout", "0.5"], cwd: box.url)
        XCTAssertEqual(d.stderr.split(separator: "\n").first.map(String.init), "d.lua:3: script timed out after 0.5 s (--timeout)")
        XCTAssertEqual(d.status, r.status)
    }

    func warnings(_ scene: String) throws -> [String] {
        try box.write("w.lua", scene)
        let r = try Tool.run(["w.lua", "--check"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        return r.stderr.split(separator: "\n").filter { $0.hasPrefix("wobble-run: warning: ") }.map { String($0.dropFirst(21)) }
    }

    /// An empty region on the image's corner is empty, not outside; a
    /// pinned region whose center is on its edge was reached by the
    /// impulse: the warning says why it does not move.
    func testWarningsSayWhatIsWrong() throws {
        XCTAssertEqual(try warnings("""
            image("img.png")
            addSketch{x = 0, y = 0, w = 0, h = 0}
            prepare()
            impulse(nil, 1, 0)
            wait(1)
            """), ["a region is empty: its corners (0, 0) (0, 0) (0, 0) (0, 0) enclose no area, so it never moves; give it a width and a height",
                   "nothing moves in the clip's 30 frames (an impulse, touch or shake reached a region, but it cannot move: its corners enclose no area)"])
        XCTAssertEqual(try warnings("""
            image("img.png")
            local a = addSketch{x = 20, y = 20, w = 100, h = 60, center = {70, 80}}
            a.pin = "bottom"
            prepare()
            impulse(nil, 1, 0)
            wait(1)
            """), ["nothing moves in the clip's 30 frames (an impulse, touch or shake reached a region, but it cannot move: its center (70, 80) is not strictly inside its corners (on an edge or outside); the pin holds the pinned edge still by itself: put the center inside)"])
        // Not reached at all: as before.
        XCTAssertEqual(try warnings("""
            image("img.png")
            addSketch{x = 20, y = 20, w = 100, h = 60}
            prepare()
            wait(1)
            """), ["nothing moves in the clip's 30 frames (no impulse, touch or shake reached a region)"])
    }
}

/// Every relative link with an anchor in the README and docs/ leads to a
/// heading that exists (GitHub's anchors: lower case, punctuation dropped,
/// spaces as hyphens, `-1`, `-2` for repeats).
final class DocLinksTests: XCTestCase {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized

    /// The anchors of a Markdown text's headings (outside code fences).
    static func anchors(_ text: String) -> Set<String> {
        var out = Set<String>(), counts: [String: Int] = [:], fenced = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { fenced.toggle(); continue }
            guard !fenced, line.hasPrefix("#") else { continue }
            var title = String(line.drop(while: { $0 == "#" })).trimmingCharacters(in: .whitespaces)
            // A link in a heading counts by its text.
            while let open = title.range(of: "]("), let close = title[open.upperBound...].firstIndex(of: ")") {
                title.removeSubrange(open.lowerBound...close)
                if let bracket = title[..<open.lowerBound].lastIndex(of: "[") { title.remove(at: bracket) }
            }
            var slug = ""
            for u in title.lowercased().unicodeScalars {
                if u == " " { slug += "-" } else if u == "-" || u == "_" || CharacterSet.alphanumerics.contains(u) { slug.unicodeScalars.append(u) }
            }
            let n = counts[slug, default: 0]
            counts[slug] = n + 1
            out.insert(n == 0 ? slug : "\(slug)-\(n)")
        }
        return out
    }

    /// The links `(target#anchor)` of a Markdown text, outside code fences and code spans.
    static func links(_ text: String) -> [(file: String, anchor: String)] {
        var out: [(String, String)] = [], fenced = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { fenced.toggle(); continue }
            guard !fenced else { continue }
            // Code spans hold examples, not links.
            let plain = line.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 0 }.map(\.element).joined()
            var rest = Substring(plain)
            while let open = rest.range(of: "](") {
                guard let close = rest[open.upperBound...].firstIndex(of: ")") else { break }
                let target = String(rest[open.upperBound..<close])
                rest = rest[close...]
                guard !target.contains("://"), !target.hasPrefix("mailto:"), let hash = target.firstIndex(of: "#") else { continue }
                out.append((String(target[..<hash]), String(target[target.index(after: hash)...])))
            }
        }
        return out
    }

    func testSlugs() {
        XCTAssertEqual(Self.anchors("## The mask \"auto\" finds: `wobble-run cutout`\n"), ["the-mask-auto-finds-wobble-run-cutout"])
        XCTAssertEqual(Self.anchors("# A\n```\n# not a heading\n```\n## A\n"), ["a", "a-1"])
        XCTAssertEqual(Self.links("see [CLI](CLI.md#x-y), [here](#z), `[no](#code)` and [web](https://e.org/#a)").map { "\($0.file)#\($0.anchor)" },
                       ["CLI.md#x-y", "#z"])
    }

    func testEveryAnchorLinkResolves() throws {
        let docs = Self.repo.appendingPathComponent("docs")
        let files = [Self.repo.appendingPathComponent("README.md")]
            + (try FileManager.default.contentsOfDirectory(atPath: docs.path)).filter { $0.hasSuffix(".md") }.sorted().map { docs.appendingPathComponent($0) }
        var checked = 0, broken: [String] = []
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            for link in Self.links(text) {
                let target = link.file.isEmpty ? file : file.deletingLastPathComponent().appendingPathComponent(link.file).standardized
                guard let other = try? String(contentsOf: target, encoding: .utf8) else {
                    broken.append("\(file.lastPathComponent): \(link.file)#\(link.anchor) (no such file)")
                    continue
                }
                checked += 1
                if !Self.anchors(other).contains(link.anchor) {
                    broken.append("\(file.lastPathComponent): \(link.file)#\(link.anchor)")
                }
            }
        }
        XCTAssertGreaterThan(checked, 10)
        XCTAssertEqual(broken, [])
    }
}
