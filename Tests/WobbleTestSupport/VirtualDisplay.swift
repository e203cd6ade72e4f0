import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An Xvfb server of our own on a free display number, for the whole run
/// of the studio tests (stopped when the process exits).
public final class VirtualDisplay: @unchecked Sendable {
    public let name: String
    private let process: Process

    /// Displays by screen size, started on first use (test methods run one
    /// at a time, on one thread).
    nonisolated(unsafe) private static var shared: [String: VirtualDisplay] = [:]
    nonisolated(unsafe) private static var failure: String?

    /// The display with a `width`×`height` screen, started on first use;
    /// throws when Xvfb cannot start.
    public static func get(width: Int = 1920, height: Int = 1080) throws -> VirtualDisplay {
        let key = "\(width)x\(height)"
        if let d = shared[key] { return d }
        if let f = failure { throw NSError(domain: "studio", code: 1, userInfo: [NSLocalizedDescriptionKey: f]) }
        do {
            let d = try VirtualDisplay(screen: key)
            if shared.isEmpty { atexit { for d in VirtualDisplay.shared.values { d.stop() } } }
            shared[key] = d
            return d
        } catch {
            failure = "\(error)"
            throw error
        }
    }

    private init(screen: String) throws {
        guard let xvfb = ["/usr/bin/Xvfb", "/usr/local/bin/Xvfb"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw NSError(domain: "studio", code: 1, userInfo: [NSLocalizedDescriptionKey: "Xvfb is not installed (Scripts/install-deps.sh --bench installs it)"])
        }
        var n = 90 + Int(getpid() % 50)
        while FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(n)") || FileManager.default.fileExists(atPath: "/tmp/.X\(n)-lock") {
            n += 1
        }
        name = ":\(n)"
        process = Process()
        process.executableURL = URL(fileURLWithPath: xvfb)
        process.arguments = [name, "-screen", "0", "\(screen)x24", "-nolisten", "tcp", "-noreset"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(n)") {
            guard process.isRunning, Date() < deadline else {
                throw NSError(domain: "studio", code: 1, userInfo: [NSLocalizedDescriptionKey: "Xvfb \(name) did not start"])
            }
            usleep(20_000)
        }
    }

    public func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    public var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["DISPLAY"] = name
        env.removeValue(forKey: "WAYLAND_DISPLAY")
        return env
    }

    /// Runs an X client (xdotool, import) on this display.
    @discardableResult
    public func x(_ program: String, _ args: [String]) throws -> (status: Int32, stdout: Data, stderr: String) {
        try Tool.exec(program, args, env: environment)
    }
}
