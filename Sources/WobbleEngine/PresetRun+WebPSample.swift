import Foundation
import WobbleCore
import WobbleMedia

extension PresetRun {
    /// WebP's first quality predicted from a sample of the clip's frames,
    /// so that the search's first whole encode usually lands within
    /// `QualityModel.closeEnough` of the limit and is the only one.
    ///
    /// An animated WebP is its first frame whole, then for each frame the
    /// rectangle that changed since the frame before, each compressed on
    /// its own (libwebp's `ANMF` chunks): the file is close to the sum of
    /// what each frame adds, and what a frame adds depends on that frame
    /// and the one before. The sample is frame 0, then `runs` short runs
    /// of consecutive frames spread over the frames that change (each run
    /// led by the frame before it, whose own chunk, against the run
    /// before, is not counted): encoded as one small animation, its chunks
    /// say the first frame's bytes exactly and, for `runs` × `runLength`
    /// frames, what a frame adds. Scaled to the clip by the pixels each
    /// frame changes (`FrameCollector.changedPixels`; bytes per changed
    /// pixel vary less from frame to frame than bytes do), that is the
    /// clip's file at the sample's quality. The sample is encoded at 80,
    /// then its first half at the quality that says fits (the slope of
    /// log(bytes) against quality, for the first frame and for the rest,
    /// from the two), and the first whole encode is at the highest quality
    /// predicted within `aim` of the limit.
    package struct WebPSample {
        /// The fewest pairs (a frame and the one before it) in the sample;
        /// a longer clip gets one pair for every `framesPerPair` frames.
        package static let fewestPairs = 12, framesPerPair = 8
        /// The part encoded again at other qualities for the slopes: frame 0
        /// and the first `partPairs` pairs (a prefix of the sample, so the
        /// frames before each pair are the same as in the sample).
        package static let partPairs = 3
        /// The share of the limit the first whole encode aims at: the
        /// middle of the window (`QualityModel.closeEnough` to 1), less the
        /// sample's errors measured on the gallery (docs/performance.md).
        package static let aim = 0.93
        /// The sample is made only where it and its part cover at most this
        /// share of the clip's frames (else it costs about as much as the
        /// second whole encode it is there to save).
        package static let mostShare = 0.5
        /// The part is encoded again at the quality predicted where that is
        /// more than `near` steps from the quality it was last encoded at,
        /// `partTries` times at most.
        package static let near = 2, partTries = 3

        /// The clip frames in the sample, in order (0 first).
        package let frames: [Int]
        /// The clip frames of its part (frame 0 and some of its pairs), in order.
        package let part: [Int]
        /// Each clip frame's changed pixels (`FrameCollector.changedPixels`).
        package let changed: [Int]

        /// The sample of a clip whose frames change `changed` pixels each
        /// (frame 0 first); nil where the clip is too short for a sample to
        /// be worth it or nothing changes.
        package init?(changed: [Int]) {
            let n = changed.count
            let pairs = max(Self.fewestPairs, n / Self.framesPerPair)
            guard n > 2 * pairs else { return nil }
            let live = (1..<n).filter { changed[$0] > 0 }
            guard !live.isEmpty else { return nil }
            var frames = [0], part = [0]
            for i in 0..<pairs {
                // The pair around the i-th of `pairs` equal shares of the frames that change.
                let k = live[min(live.count - 1, Int((Double(i) + 0.5) * Double(live.count) / Double(pairs)))]
                for f in [k - 1, k] where f > frames.last! { frames.append(f) }
                if i == Self.partPairs - 1 { part = frames }
            }
            guard Double(frames.count + part.count) <= Self.mostShare * Double(n) else { return nil }
            self.frames = frames
            self.part = part
            self.changed = changed
        }

        /// What one encode of the sample (or of its part) says: the first
        /// frame's bytes, the bytes of the frames that count (those that
        /// follow the clip frame before them) and their changed pixels, and
        /// the file's bytes outside its frames.
        package struct Sizes {
            package let quality: Int
            package let first: Int
            package let added: Int
            package let pixels: Int
            package let rest: Int
        }

        /// Each frame's bytes in `file`, the clip frames `list` encoded at
        /// `fps` (a frame merged into the one before: 0), by clip frame,
        /// and the bytes outside the frames; nil where its chunks do not
        /// line up with the frames.
        package static func frameBytes(_ file: [UInt8], list: [Int], fps: Double) -> (bytes: [Int: Int], rest: Int)? {
            guard let chunks = WebPFrames.sizes(file), !chunks.isEmpty else { return nil }
            var bytes: [Int: Int] = [:]
            for f in list { bytes[f] = 0 }
            var t = 0, j = 0
            for c in chunks {
                // The chunk starts the frame that starts at t; the frames
                // merged into it (no change) added nothing.
                while j < list.count && AnimationTiming.millisecond(index: j, fps: fps) < t { j += 1 }
                guard j < list.count, AnimationTiming.millisecond(index: j, fps: fps) == t else { return nil }
                bytes[list[j], default: 0] += c.bytes
                t += c.duration
            }
            return (bytes, file.count - chunks.reduce(0) { $0 + $1.bytes })
        }

        /// The sizes of the clip frames `list` (0 first) from `frameBytes`.
        package func sizes(_ read: (bytes: [Int: Int], rest: Int), list: [Int], quality: Int) -> Sizes {
            var added = 0, pixels = 0
            for j in list.indices.dropFirst() where list[j] == list[j - 1] + 1 {
                added += read.bytes[list[j]] ?? 0
                pixels += changed[list[j]]
            }
            return Sizes(quality: quality, first: read.bytes[list[0]] ?? 0, added: added, pixels: pixels, rest: read.rest)
        }

        /// The pixels every frame after the first changes.
        var clipPixels: Int { changed.dropFirst().reduce(0, +) }

        /// The clip's file at quality `q`, from the sample's sizes at one
        /// quality and the slopes of log(bytes) against quality of the
        /// first frame and of the frames after it; nil where the sample has
        /// no frame that counts.
        package func predicted(_ q: Int, from s: Sizes, firstSlope: Double, addedSlope: Double) -> Double? {
            guard s.pixels > 0 else { return nil }
            let added = Double(s.added) / Double(s.pixels) * Double(clipPixels)
            let d = Double(q - s.quality)
            return Double(s.rest) + Double(s.first) * exp(firstSlope * d) + added * exp(addedSlope * d)
        }

        /// The highest quality whose file is predicted within `aim` of
        /// `limit` (the lowest where none is), and the slope of the
        /// predicted log(bytes) there.
        package func quality(limit: Int, from s: Sizes, firstSlope: Double, addedSlope: Double) -> (quality: Int, slope: Double)? {
            let lowest = PresetRun.lowestQuality, top = QualityModel.top
            func bytes(_ q: Int) -> Double? { predicted(q, from: s, firstSlope: firstSlope, addedSlope: addedSlope) }
            guard bytes(lowest) != nil else { return nil }
            let target = Self.aim * Double(limit)
            let q = (lowest...top).last { (bytes($0) ?? .infinity) <= target } ?? lowest
            let a = max(lowest, q - 1), b = min(top, q + 1)
            let slope = b > a ? (log(bytes(b)!) - log(bytes(a)!)) / Double(b - a) : QualityModel.priorSlope
            return (q, slope.isFinite && slope > 0 ? slope : QualityModel.priorSlope)
        }

        /// The slopes of log(bytes) against quality of the first frame and
        /// of the frames that count, from the part's sizes at two
        /// qualities; the prior slope for one that does not rise.
        package static func slopes(_ a: Sizes, _ b: Sizes) -> (first: Double, added: Double) {
            let dq = Double(b.quality - a.quality)
            func slope(_ x: Int, _ y: Int) -> Double {
                guard dq != 0, x > 0, y > 0 else { return QualityModel.priorSlope }
                let s = log(Double(y) / Double(x)) / dq
                return s.isFinite && s > 0 ? s : QualityModel.priorSlope
            }
            return (slope(a.first, b.first), slope(a.added, b.added))
        }
    }
}
