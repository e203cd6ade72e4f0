import Foundation
import WobbleCore
import WobbleEngine
import WobbleScript
import WobbleSystem

/// `wobble-run cutout PHOTO --box X,Y,W,H [-o MASK.png]`: writes the mask
/// `addSketch{cutout = "auto"}` would find for a rectangular region with
/// that box, or with `--at X,Y` the object a studio `Shift`+click there
/// finds first (for pipelines, and to edit by hand in a paint program):
/// grey, 255 object, 0 background, the photo's size. One clear line and
/// nothing written on any failure.
enum CutoutCommand {
    static let usage = "usage: wobble-run cutout PHOTO (--box X,Y,W,H | --at X,Y) [-o MASK.png] [--timeout S]   (MASK.png: the photo's name with -mask.png)"

    static let helpText = """
    \(usage)

    Finds the object inside the box (pixels of PHOTO, origin top-left) as
    addSketch{x = X, y = Y, w = W, h = H, cutout = "auto"} does, and writes
    it as a grey PNG the size of PHOTO: 255 object, 0 background, a soft
    edge between. The same photo and box give the same bytes on every run.
    Use it as addSketch{..., cutout = "MASK.png"}, after touching it up in
    any paint program if you like.

    With --at X,Y instead: the object a Shift+click at that point of the
    picture finds first in the studio (wobble-run edit).

      --box X,Y,W,H  the region's box (whole pixels; inside the photo)
      --at X,Y       a point on the object (pixels; inside the photo)
      -o MASK.png    where to write the mask (replaced atomically)
      --timeout S    give up after S seconds (reading the photo and finding
                     the object): one line, exit 1, nothing written

    PHOTO must be a regular file (a FIFO or a device is refused, as the
    scene's image() refuses it). Without -o the mask is PHOTO's name with
    -mask.png, a name wobble-run chooses: a symbolic link there is replaced
    by the mask, never written through.

    """

    struct Failure: Error { let message: String; let code: Int32 }
    /// `--help` or `-h` among the options (not as an option's value).
    struct Help: Error {}

    static func run(_ args: [String]) -> Int32 {
        do {
            try perform(args)
            return 0
        } catch is Help {
            print(helpText, terminator: "")
            return 0
        } catch let f as Failure {
            printError("wobble-run: cutout: \(f.message)")
            return f.code
        } catch {
            printError("wobble-run: cutout: \(error)")
            return 1
        }
    }

    static func perform(_ args: [String]) throws {
        var photo: String?, boxText: String?, atText: String?, output: String?, timeoutText: String?
        var i = 0, optionsEnded = false
        func value(_ name: String) throws -> String {
            i += 1
            guard i < args.count else { throw Failure(message: "\(name) needs a value (\(usage))", code: 2) }
            return args[i]
        }
        /// An option's value, refused when the option came before.
        func once(_ slot: inout String?, _ name: String, _ v: String) throws {
            guard slot == nil else { throw Failure(message: "\(name) is given twice (\(usage))", code: 2) }
            slot = v
        }
        while i < args.count {
            let a = args[i]
            defer { i += 1 }
            if optionsEnded || a == "-" || !a.hasPrefix("-") {
                guard photo == nil else { throw Failure(message: "one photo only (\(usage))", code: 2) }
                photo = a
                continue
            }
            switch a {
            case "--": optionsEnded = true
            case "--help", "-h": throw Help()
            case "--box": try once(&boxText, a, try value(a))
            case "--at": try once(&atText, a, try value(a))
            case "-o", "--output": try once(&output, "-o", try value(a))
            case "--timeout": try once(&timeoutText, a, try value(a))
            default:
                if a.hasPrefix("--box=") { try once(&boxText, "--box", String(a.dropFirst(6))) }
                else if a.hasPrefix("--at=") { try once(&atText, "--at", String(a.dropFirst(5))) }
                else if a.hasPrefix("--output=") { try once(&output, "-o", String(a.dropFirst(9))) }
                else if a.hasPrefix("--timeout=") { try once(&timeoutText, "--timeout", String(a.dropFirst(10))) }
                else { throw Failure(message: "unknown option '\(PathBytes.display(a))' (\(usage))", code: 2) }
            }
        }
        guard let photo else { throw Failure(message: usage, code: 2) }
        var timeout: Double?
        if let t = timeoutText {
            guard let v = Double(t.trimmingCharacters(in: .whitespaces)), v.isFinite, v > 0 else {
                throw Failure(message: "--timeout must be a number of seconds above 0 (got '\(PathBytes.display(t, controls: true))')", code: 2)
            }
            timeout = v
        }
        let target = output ?? ScenePaths.baseName(photo) + "-mask.png"
        // A mask is a PNG: another name would hold bytes its extension does not say.
        let stream = target == "-" || OutputTarget.namesStdout(target) || Posix.kind(target)?.isStream == true
        guard stream || target.lowercased().hasSuffix(".png") else {
            throw Failure(message: "-o '\(PathBytes.display(target, controls: true))': a mask is a PNG file: name it with .png", code: 2)
        }
        let query: CommandFiles.CutoutQuery, shown: String
        switch (boxText, atText) {
        case (let boxText?, nil):
            let parts = boxText.split(separator: ",", omittingEmptySubsequences: false).map { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard parts.count == 4, let x = parts[0], let y = parts[1], let w = parts[2], let h = parts[3], w > 0, h > 0 else {
                throw Failure(message: "--box must be X,Y,W,H in whole pixels with W and H above 0 (got '\(PathBytes.display(boxText))')", code: 2)
            }
            query = .box(x: x, y: y, w: w, h: h)
            shown = "--box \(boxText)"
        case (nil, let atText?):
            let parts = atText.split(separator: ",", omittingEmptySubsequences: false).map { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard parts.count == 2, let x = parts[0], let y = parts[1], x.isFinite, y.isFinite else {
                throw Failure(message: "--at must be X,Y in pixels (got '\(PathBytes.display(atText))')", code: 2)
            }
            query = .click(x: x, y: y)
            shown = "--at \(atText)"
        case (nil, nil):
            throw Failure(message: "--box X,Y,W,H or --at X,Y is required (\(usage))", code: 2)
        case (_?, _?):
            throw Failure(message: "--box and --at: give one (\(usage))", code: 2)
        }
        // --timeout: the photo's read and the search for the object, as a
        // render's reads are bounded (a stalled network file, a huge photo).
        let alarm = timeout.map { t in
            Alarm(after: t) {
                printError("wobble-run: cutout: not done within \(NumberText.plain(t)) s (--timeout): nothing written")
                TemporaryPaths.removeAll()
                ThisProcess.exitNow(1)
            }
        }
        do {
            try CommandFiles.writeCutoutMask(photo: photo, query: query, shown: shown, to: target,
                                             name: output == nil ? .madeUp : .given, beforeWrite: { alarm?.cancel() })
            alarm?.cancel()
        } catch let e as RunError {
            alarm?.cancel()
            throw Failure(message: e.message, code: 1)
        }
    }
}
