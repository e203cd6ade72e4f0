import Foundation
import XCTest
import WobbleCore
import WobbleMedia

/// A running `wobble-run edit` window: its stderr lines, its X window and
/// its image area.
final class StudioWindowUnderTest {
    let display: VirtualDisplay
    let process = Process()
    private let reader = LineReader()
    let windowID: String
    /// Where the picture is in the window (the latest `studio: window` line).
    private(set) var imageArea: (x: Int, y: Int, w: Int, h: Int)

    /// Reads the image area again (after the window was resized).
    func updateImageArea() {
        for l in linesSnapshot().reversed() where l.hasPrefix("studio: window ") {
            if let a = StudioWindowUnderTest.parseArea(l) { imageArea = a }
            return
        }
    }

    /// `studio: window 480x356 at 0,0; image area 14,0 451x300; scale 1`
    static func parseArea(_ l: String) -> (Int, Int, Int, Int)? {
        guard let r = l.range(of: "image area ") else { return nil }
        let rest = l[r.upperBound...].split(separator: ";")[0]
        let parts = rest.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "x" }).compactMap { Int($0) }
        return parts.count == 4 ? (parts[0], parts[1], parts[2], parts[3]) : nil
    }

    /// `printf`: `scene` is a printf(1) format for the scene's path, which
    /// `/bin/sh` expands (names that are not UTF-8 cannot be passed as a
    /// Swift string); the window's title is then looked up by `title`.
    init(scene: String, cwd: URL, display: VirtualDisplay, extra: [String] = [], printf: Bool = false, title: String? = nil) throws {
        self.display = display
        let args = ["-v", "--window-position", "0,0"] + extra
        if printf {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", #"s=$(printf "$1"); shift; exec "$0" edit "$s" "$@""#, Tool.executable.path, scene] + args
        } else {
            process.executableURL = Tool.executable
            process.arguments = ["edit", scene] + args
        }
        process.currentDirectoryURL = cwd
        process.environment = display.environment
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let handle = err.fileHandleForReading
        let reader = self.reader
        handle.readabilityHandler = { h in
            let data = h.availableData
            guard !data.isEmpty else { h.readabilityHandler = nil; return }
            reader.add(data)
        }
        try process.run()
        var area: (Int, Int, Int, Int)?
        let deadline = Date().addingTimeInterval(15)
        while area == nil {
            guard Date() < deadline, process.isRunning else {
                throw NSError(domain: "studio", code: 1, userInfo: [NSLocalizedDescriptionKey: "the studio did not open a window: \(StudioWindowUnderTest.join(reader.snapshot(), process))"])
            }
            for l in reader.snapshot() where l.hasPrefix("studio: window ") {
                if let a = StudioWindowUnderTest.parseArea(l) { area = a }
            }
            usleep(20_000)
        }
        imageArea = area ?? (0, 0, 0, 0)
        let title = "wobble-run edit: " + (title ?? URL(fileURLWithPath: scene).lastPathComponent)
        let found = try display.x("xdotool", ["search", "--sync", "--name", title])
        windowID = String(decoding: found.stdout, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
        guard !windowID.isEmpty else {
            throw NSError(domain: "studio", code: 1, userInfo: [NSLocalizedDescriptionKey: "no X window named '\(title)'"])
        }
        try display.x("xdotool", ["windowfocus", "--sync", windowID])
    }

    static func join(_ lines: [String], _ p: Process) -> String {
        lines.suffix(5).joined(separator: " | ") + (p.isRunning ? "" : " (exited \(p.terminationStatus))")
    }

    func linesSnapshot() -> [String] { reader.snapshot() }

    /// Waits until a stderr line after the first `after` lines satisfies `match`; returns it.
    @discardableResult
    func waitForLine(after: Int = 0, timeout: Double = 10, _ what: String, _ match: (String) -> Bool) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let ls = linesSnapshot()
            if ls.count > after, let l = ls[after...].first(where: match) { return l }
            guard Date() < deadline, process.isRunning else {
                throw NSError(domain: "studio", code: 1, userInfo: [NSLocalizedDescriptionKey: "no '\(what)' line: \(StudioWindowUnderTest.join(ls, process))"])
            }
            usleep(10_000)
        }
    }

    var lineCount: Int { linesSnapshot().count }

    func key(_ keys: String...) throws {
        try display.x("xdotool", ["key", "--delay", "30"] + keys)
    }

    /// A left-button drag in window pixels.
    func drag(from a: (Int, Int), to b: (Int, Int)) throws {
        try display.x("xdotool", ["mousemove", "--window", windowID, "\(a.0)", "\(a.1)", "mousedown", "1",
                                  "mousemove", "--window", windowID, "\((a.0 + b.0) / 2)", "\((a.1 + b.1) / 2)",
                                  "mousemove", "--window", windowID, "\(b.0)", "\(b.1)", "mouseup", "1"])
    }

    /// The image area of the window as it is on the screen now.
    func screenshot() throws -> RGBAImage {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("studio-shot-\(UUID().uuidString).png").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let r = try display.x("import", ["-window", windowID, "PNG32:" + path])
        guard r.status == 0 else { throw NSError(domain: "studio", code: 1, userInfo: [NSLocalizedDescriptionKey: "import failed: \(r.stderr)"]) }
        let full = try ImageIO.load(path: path)
        return StudioWindowUnderTest.crop(full, imageArea)
    }

    static func crop(_ img: RGBAImage, _ r: (x: Int, y: Int, w: Int, h: Int)) -> RGBAImage {
        var px = [UInt8](repeating: 0, count: r.w * r.h * 4)
        for y in 0..<r.h where y + r.y < img.height {
            for x in 0..<r.w where x + r.x < img.width {
                let s = ((y + r.y) * img.width + x + r.x) * 4, d = (y * r.w + x) * 4
                for c in 0..<4 { px[d + c] = img.pixels[s + c] }
            }
        }
        return RGBAImage(width: r.w, height: r.h, pixels: px)
    }

    /// Esc (twice when the studio asks first: unsaved edits are dropped), then the exit status.
    func quit() throws -> Int32 {
        if process.isRunning { try? key("Escape") }
        let asked = Date().addingTimeInterval(2)
        while process.isRunning && Date() < asked {
            if linesSnapshot().contains(where: { $0 == "studio: asking before quitting (unsaved edits)" }) {
                try? key("Escape")
                break
            }
            usleep(20_000)
        }
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { process.terminate(); process.waitUntilExit() }
        if process.terminationStatus != 0 || process.terminationReason != .exit {
            print("studio exited \(process.terminationReason == .exit ? "with status" : "on signal") \(process.terminationStatus): "
                  + linesSnapshot().filter { !$0.contains(" presented ") }.suffix(4).joined(separator: " | "))
        }
        return process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
    }

    deinit {
        if process.isRunning { process.terminate() }
    }
}

/// Lines of a pipe, collected on another thread.
final class LineReader: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    private var pending = ""

    func add(_ data: Data) {
        lock.lock()
        defer { lock.unlock() }
        pending += String(decoding: data, as: UTF8.self)
        while let nl = pending.firstIndex(of: "\n") {
            lines.append(String(pending[..<nl]))
            pending = String(pending[pending.index(after: nl)...])
        }
    }

    func snapshot() -> [String] {
        lock.lock()
        defer { lock.unlock() }
        return lines
    }
}

/// Share of RGB channels of `a` and `b` (same size) within `tolerance`,
/// over the pixels `include` accepts.
func agreement(_ a: RGBAImage, _ b: RGBAImage, tolerance: Int = 2, include: (Int, Int) -> Bool = { _, _ in true }) -> (share: Double, differing: Int) {
    guard a.width == b.width, a.height == b.height else { return (0, a.width * a.height * 3) }
    var total = 0, ok = 0
    for y in 0..<a.height {
        for x in 0..<a.width where include(x, y) {
            let i = (y * a.width + x) * 4
            for c in 0..<3 {
                total += 1
                if abs(Int(a.pixels[i + c]) - Int(b.pixels[i + c])) <= tolerance { ok += 1 }
            }
        }
    }
    return (total == 0 ? 1 : Double(ok) / Double(total), total - ok)
}
