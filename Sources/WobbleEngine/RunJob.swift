import Foundation
import WobbleCore
import WobbleMedia
import WobbleScript
import WobbleSystem

/// Decoded images by path, with the stamp of the file each came from.
typealias ImageCache = [String: (stamp: FileStamp, image: RGBAImage)]
/// Decoded sounds by path, with the stamp of the file and the length limit
/// each was decoded under (a rerun that asks the same gets the same samples
/// without running ffmpeg again).
typealias SoundCache = [String: (stamp: FileStamp, maxSeconds: Double, samples: CheckedArray<Float>)]

/// What a cutout's layer was made from: the request (where the scene asked
/// left out), the image file's stamp and, for a mask file, its stamp. A
/// run finds the layer of an unchanged cutout here instead of running
/// GrabCut and the inpainting again.
struct CutoutKey: Hashable, Sendable {
    var request: CutoutRequest
    var imagePath: String
    var imageStamp: FileStamp
    var maskStamp: FileStamp?
}
typealias CutoutCache = [CutoutKey: CutoutLayer]

/// One run of a live session's scene, with everything it reads copied in
/// (options, performed events, sketch edits, the decoded images so far):
/// `compute()` is pure as far as the session is concerned, so it may run
/// on any thread (one Lua VM of its own, used on that thread only) while
/// the session goes on serving frames of its last good clip.
/// `LiveSession.commit` puts the outcome in, on the session's thread.
public struct RunJob: Sendable {
    public let options: SessionOptions
    public let inputs: LiveSession.RunInputs
    let cache: ImageCache
    var sounds: SoundCache = [:]
    /// The cutouts of the session's last runs.
    let cutoutCache: CutoutCache

    /// Runs the scene (script, image, clip). `shouldAbort` is polled while
    /// the script runs (a run abandoned: it then fails as interrupted).
    public func compute(shouldAbort: @escaping @Sendable () -> Bool = { false }) -> RunOutcome {
        var cache = self.cache
        var decoded: ImageCache = [:]
        var stamps: [String: FileStamp?] = [:]
        func loadImage(_ path: String) throws -> (image: RGBAImage, stamp: FileStamp?) {
            let stamp = FileStamp(path)
            stamps[path] = stamp
            if let c = cache[path], stamp != nil, c.stamp == stamp { return (c.image, c.stamp) }
            do {
                let img = try ImageIO.load(path: path)
                if let stamp {
                    cache[path] = (stamp, img)
                    decoded[path] = (stamp, img)
                }
                return (img, stamp)
            } catch let e as MediaError {
                throw SessionError(e.message)
            }
        }
        var soundCache = self.sounds
        var decodedSounds: SoundCache = [:]
        let runner = SceneRunner(options: options) { try loadImage($0).image }
        runner.loadSound = { path, maxSeconds in
            let stamp = FileStamp(path)
            if let c = soundCache[path], stamp != nil, c.stamp == stamp, c.maxSeconds == maxSeconds { return c.samples }
            let samples = try AudioDecoder.decode(path: path, maxSeconds: maxSeconds)
            if let stamp {
                soundCache[path] = (stamp, maxSeconds, samples)
                decodedSounds[path] = (stamp, maxSeconds, samples)
            }
            return samples
        }
        // Cutouts whose image, region and mask file did not change are not
        // made again (a hot reload, an edit of another region, a poke).
        var cutouts: CutoutCache = [:]
        var cutoutsMade = 0
        let known = cutoutCache
        runner.makeCutout = { [unowned runner] request, image in
            var key: CutoutKey?
            if let path = runner.imagePath, let stamp = stamps[path] ?? nil {
                var r = request
                r.place = nil
                var maskStamp: FileStamp?
                if case .file(let mask, _) = request.source {
                    maskStamp = FileStamp(mask)
                }
                if case .file = request.source, maskStamp == nil {
                    key = nil
                } else {
                    key = CutoutKey(request: r, imagePath: path, imageStamp: stamp, maskStamp: maskStamp)
                }
            }
            if let key, let layer = known[key] ?? cutouts[key] {
                cutouts[key] = layer
                return layer
            }
            let layer = try Cutouts.layer(request, image: image)
            cutoutsMade += 1
            if let key { cutouts[key] = layer }
            return layer
        }
        // The scene's path is a `PathBytes` string (a name that is not
        // UTF-8 is the system's bytes): `Posix`, not `FileManager`.
        let text = try? Posix.readFile(options.scenePath)
        func outcome(_ result: Result<RunOutcome.Success, RunOutcome.Failure>, named: [String]?) -> RunOutcome {
            RunOutcome(inputs: inputs, result: result, named: named.map(LiveSession.unique), decoded: decoded,
                       decodedSounds: decodedSounds, sceneText: text, cutouts: cutouts, cutoutsMade: cutoutsMade)
        }
        do {
            let result = try runner.run(missingScene: {
                ScriptError(message: "wobble-run: scene '\($0)': no such file", kind: .load)
            }) { so in
                so.performed = inputs.performed
                so.sketchEdits = inputs.edits
                so.shouldAbort = shouldAbort
            }
            guard let image = runner.image, let path = runner.imagePath else {
                throw ScriptError(message: "wobble-run: no image: the scene loads none and no --image was given", kind: .finish)
            }
            let success = RunOutcome.Success(clip: result.clip, scriptedDuration: result.scriptEnd, image: image,
                                             imagePath: path, imageStamp: stamps[path] ?? nil, sketchCalls: result.sketchCalls,
                                             kicks: result.kicks, stillWaits: result.stillWaits, periodWait: result.periodWait,
                                             warnings: RunJob.warnings(result), scenePerformed: result.scenePerformed,
                                             sound: SceneSound(result))
            return outcome(.success(success), named: runner.named.filter { $0 != result.outputPath } + [path])
        } catch let e as ScriptError {
            return outcome(.failure(.init(e)), named: runner.named + (runner.imagePath.map { [$0] } ?? []))
        } catch let e as SessionError {
            return outcome(.failure(.init(message: "wobble-run: \(e.message)", details: nil, kind: .load)),
                           named: runner.named + (options.imagePath.map { [$0] } ?? []))
        } catch {
            return outcome(.failure(.init(message: "wobble-run: \(error)", details: nil, kind: .load)), named: nil)
        }
    }
}

extension RunJob {
    /// The warnings a headless render of the scene prints: the scene's and,
    /// when its output is a looping GIF (the default), one that ends while
    /// regions still move.
    static func warnings(_ result: ScriptResult) -> [String] {
        let clip = result.clip
        var out = ClipWarnings.scene(result.warnings, clip: clip)
        let gif = result.outputPath.map { $0.lowercased().hasSuffix(".gif") } ?? true
        if gif, let w = ClipWarnings.loopJump(clip, loops: true, wholeClip: true, still: clip.loop != nil || ClipWarnings.isStill(clip)) {
            out.append(w)
        }
        return out
    }
}

/// What one run computed, to be committed into its session.
public struct RunOutcome: Sendable {
    struct Success: Sendable {
        var clip: Clip
        var scriptedDuration: Double
        var image: RGBAImage
        var imagePath: String
        var imageStamp: FileStamp?
        var sketchCalls: [SketchCall]
        var kicks: [ScriptKick]
        var stillWaits: [StillWait]
        var periodWait: LoopSource.PeriodWait?
        var warnings: [String]
        var scenePerformed: [PerformedEvent]
        var sound: SceneSound? = nil
    }
    /// A `ScriptError`'s parts (values only).
    struct Failure: Error, Sendable {
        var message: String
        var details: String?
        var kind: ScriptError.Kind
        init(message: String, details: String?, kind: ScriptError.Kind) {
            self.message = message
            self.details = details
            self.kind = kind
        }
        init(_ e: ScriptError) { self.init(message: e.message, details: e.details, kind: e.kind) }
    }

    /// The events and edits it ran with.
    public let inputs: LiveSession.RunInputs
    let result: Result<Success, Failure>
    /// The files it read or named, and the image (nil: not known, the
    /// session keeps the ones it has).
    let named: [String]?
    /// Images it decoded (for the session's cache).
    let decoded: ImageCache
    /// Sounds it decoded (for the session's cache).
    let decodedSounds: SoundCache
    /// The scene's text as it read it.
    let sceneText: [UInt8]?
    /// The cutouts it used, by what they were made from, and how many of
    /// them it made (the rest came from the session's cache).
    let cutouts: CutoutCache
    let cutoutsMade: Int

    public var succeeded: Bool {
        if case .success = result { return true }
        return false
    }
}
