import Foundation
import WobbleCore
import WobbleMedia
import WobbleScript
import WobbleStudio
#if canImport(Glibc)
import Glibc
#endif

/// Entry point: one catch prints one clear line to stderr and exits with the
/// documented code (0 ok, 1 scene failed, 2 usage, 128+N on signal N).
func main() -> Int32 {
    // The exact bytes of each argument (file names need not be UTF-8).
    let args = PathBytes.arguments()
    // No file the tool opens may become a closed stdin/stdout/stderr.
    Posix.protectStandardDescriptors()
    // `wobble-run edit SCENE.lua`: the studio window (a scene file named
    // `edit` is reached as `./edit`).
    if args.first == "edit" { return Studio.main(Array(args.dropFirst())) }
    let options: Options
    do {
        options = try CommandLine_.parse(args)
    } catch let e as UsageError {
        printError("wobble-run: \(e.message)")
        return 2
    } catch {
        printError("wobble-run: \(error)")
        return 2
    }
    if options.help {
        print(CommandLine_.helpText, terminator: "")
        return 0
    }
    if options.version {
        print(CommandLine_.version)
        return 0
    }
    Interrupt.install()
    if options.watch { return Watcher(options: options).run() }
    return runOnce(options)
}

/// Runs one render (or `--check`, or `--assemble`) and maps errors to exit codes.
func runOnce(_ options: Options) -> Int32 {
    do {
        if let dir = options.assemble {
            try Assembler(options: options, directory: dir).run()
            return 0
        }
        let summary = try Runner(options: options).run()
        if options.check && !options.quiet {
            printError("ok: \(summary.frames) frame\(summary.frames == 1 ? "" : "s"), \(CommandLine_.seconds(summary.clip.duration)) s at \(CommandLine_.fmt(summary.clip.fps)) fps, \(summary.width)×\(summary.height)")
        }
        return 0
    } catch let e as ScriptError {
        printError(e.message)
        if let d = e.details, !d.isEmpty { printError(d) }
        TemporaryPaths.removeAll()
        if e.kind == .interrupted { return 128 + (Interrupt.signal ?? SIGINT) }
        return 1
    } catch let e as Interrupted {
        TemporaryPaths.removeAll()
        return 128 + e.signal
    } catch let e as UsageError {
        printError("wobble-run: \(e.message)")
        return 2
    } catch let e as RunError {
        printError("wobble-run: \(e.message)")
        TemporaryPaths.removeAll()
        return 1
    } catch let e as MediaError {
        printError("wobble-run: \(e.message)")
        TemporaryPaths.removeAll()
        return 1
    } catch {
        printError("wobble-run: \(error)")
        TemporaryPaths.removeAll()
        return 1
    }
}

exit(main())
