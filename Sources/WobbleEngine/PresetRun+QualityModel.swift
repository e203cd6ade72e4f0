import Foundation
import WobbleCore
import WobbleSystem
import WobbleMedia
import Synchronization

/// The quality model of a preset's search: bytes against quality (`QualityModel`) and APNG's colour levels (`ColourBits`, `Posterize`).
extension PresetRun {
    /// The search's picture of bytes against quality: the qualities tried,
    /// their files, and the next quality to try.
    package struct QualityModel {
        /// The first try (done when it fits) and the point tried beside it.
        package static let top = 95, second = 80
        package let limit: Int
        package private(set) var tried: [Candidate] = []
        /// The slope a single size is carried on with (`priorSlope` unless a sample said otherwise).
        package var oneSizeSlope = priorSlope

        package init(limit: Int) { self.limit = limit }

        package mutating func add(_ cs: [Candidate]) { tried += cs }

        /// The rounds of `search` for a quality: `encode` makes the files of
        /// the qualities it is given; the best that fits, or nil.
        package static func search(limit: Int, encode: ([Int]) throws -> [Candidate]) throws -> Candidate? {
            var model = QualityModel(limit: limit)
            let first = try encode([top, second])
            model.add(first)
            if first[0].bytes <= limit { return first[0] }
            let predicted = model.predict()
            var round = [predicted]
            if let below = model.hedge(below: predicted) { round.append(below) }
            model.add(try encode(round))
            if let best = model.best { return best }
            // One correction, beside the lowest: where even it does not fit, nothing does.
            let corrected = model.predict()
            let lowest = PresetRun.lowestQuality
            model.add(try encode(corrected > lowest ? [corrected, lowest] : [lowest]))
            return model.best
        }

        /// WebP's search, one try at a time (its tries run one after the
        /// other anyway: each holds several whole canvases): quality 80
        /// first; then, each time, the quality that the sizes known say
        /// fits (`predict`; after one size, a file doubling every 10
        /// quality steps: `priorSlope`), until the quality above the best
        /// that fitted is known not to fit, or, after `oneByOneTries`, the
        /// line says it does not; `oneByOneMost` tries at most, then the
        /// lowest quality where none fitted; or at once where a file fits
        /// within `closeEnough` of the limit.
        ///
        /// `first`: the first quality tried (80 where nothing better is
        /// known; `WebPSample` predicts one); `slope`: the slope of
        /// log(bytes) against quality that one size is carried on with
        /// (`priorSlope` where none is known).
        package static func searchOneByOne(limit: Int, first: Int = second, slope: Double? = nil,
                                           encode: ([Int]) throws -> [Candidate]) throws -> Candidate? {
            var model = QualityModel(limit: limit)
            if let slope, slope.isFinite, slope > 0 { model.oneSizeSlope = slope }
            model.add(try encode([min(top, max(PresetRun.lowestQuality, first))]))
            while model.tried.count < oneByOneMost {
                let q = model.predict()
                if let best = model.best {
                    // Done where the best that fits is close enough to the limit, where nothing is left between
                    // it and the lowest that does not fit, or, after `oneByOneTries`, where the line says the
                    // quality above the best does not fit.
                    if Double(best.bytes) >= closeEnough * Double(limit) || q <= best.level { break }
                    if model.tried.count >= oneByOneTries, let at = model.atLimit(), at < Double(best.level + 1) { break }
                }
                if model.tried.contains(where: { $0.level == q }) { break }
                model.add(try encode([q]))
            }
            if model.best == nil, !model.tried.contains(where: { $0.level == PresetRun.lowestQuality }) {
                model.add(try encode([PresetRun.lowestQuality]))
            }
            return model.best
        }

        /// A file that fits with at least this share of the limit ends
        /// `searchOneByOne`: one more try costs a whole encode (as much as
        /// the plain export) for at most about two quality steps (a step
        /// is 6–8% of the bytes). On the cat's first 3 s for WhatsApp: 80,
        /// then 86 (88% of the limit), two encodes where going on to 88
        /// (98%) made three.
        package static let closeEnough = 0.85
        /// The tries of `searchOneByOne` after which it stops where the line
        /// says the quality above the best does not fit; the most it makes
        /// before the lowest (sizes off the line: steps, noise).
        package static let oneByOneTries = 3, oneByOneMost = 5
        /// The slope of log(bytes) against quality that a single size is
        /// carried on with: a file doubling every 10 steps (WebP on the
        /// cat: ×2.9 from quality 80 to 95).
        package static let priorSlope = log(2.0) / 10

        /// The highest quality tried that fits.
        package var best: Candidate? { tried.filter { $0.bytes <= limit }.max { $0.level < $1.level } }
        /// The highest quality known to fit, and the lowest known not to.
        private var fitting: Int { best?.level ?? (lowestQuality - 1) }
        private var failing: Int { tried.filter { $0.bytes > limit }.map(\.level).min() ?? (Self.top + 1) }
        private var lowestQuality: Int { PresetRun.lowestQuality }

        /// The quality the line through the logarithms of the two sizes
        /// nearest the limit (one on each side where there are both) says
        /// fits at the limit, strictly between the best fitting and the
        /// lowest failing quality; their middle where the sizes do not fall
        /// with the quality; from one size, the line of `priorSlope`.
        package func predict() -> Int {
            let lo = fitting, hi = failing
            guard hi - lo > 1 else { return max(lowestQuality, lo) }
            var q = (lo + hi) / 2
            if let at = atLimit() { q = Int(at.rounded(.down)) }
            return min(hi - 1, max(lo + 1, max(lowestQuality, q)))
        }

        /// The quality at which the line through the logarithms of the two
        /// sizes nearest the limit (one on each side where there are both;
        /// one size: `priorSlope`) reaches the limit; nil where the sizes
        /// do not fall with the quality.
        package func atLimit() -> Double? {
            let byLevel = Dictionary(tried.map { ($0.level, $0.bytes) }, uniquingKeysWith: { a, _ in a })
            let points = byLevel.sorted { $0.key < $1.key }
            let below = points.filter { $0.value <= limit }.last
            let above = points.filter { $0.value > limit }.first
            let pair: [(key: Int, value: Int)]
            if let below, let above {
                pair = [below, above]
            } else {
                // All on one side: the two nearest the limit.
                pair = Array((below == nil ? points.prefix(2) : points.suffix(2)))
            }
            var at: Double?
            if pair.count == 2, pair[1].value > pair[0].value, pair[1].key > pair[0].key, pair[0].value > 0 {
                let slope = (log(Double(pair[1].value)) - log(Double(pair[0].value))) / Double(pair[1].key - pair[0].key)
                at = Double(pair[0].key) + (log(Double(limit)) - log(Double(pair[0].value))) / slope
            } else if pair.count == 1, pair[0].value > 0 {
                // One size: carried on with the prior slope.
                at = Double(pair[0].key) + (log(Double(limit)) - log(Double(pair[0].value))) / oneSizeSlope
            }
            // (Within Int's range: a quality far off is clamped by the caller.)
            return at.flatMap { $0.isFinite ? min(1e6, max(-1e6, $0)) : nil }
        }

        /// A quality two below `q`, tried beside it in case the prediction
        /// is just over the limit; nil where none lies above the best
        /// fitting quality.
        package func hedge(below q: Int) -> Int? {
            let lower = q - 2
            return lower > fitting && lower >= lowestQuality ? lower : nil
        }
    }

    /// The search for an APNG's colour bits (8 lossless, down to 4): the
    /// most bits whose file fits. A file's size falls with the bits, so the
    /// lowest level is tried first, alone: where it does not fit, no level
    /// does, and the preset halves the frame rate at once (Discord on the
    /// cat at 30 fps: one try, where 8, 7 and 4 were three). Where it fits,
    /// the level its size says fits (`priorRatio` a bit; the top, lossless,
    /// where it is far under the limit) is tried alone; then each round tries the level that
    /// the two sizes nearest the limit say fits (close to a constant ratio
    /// a bit), beside the level above it (a prediction a level too low), or
    /// the lowest unknown level alone where even that is predicted not to
    /// fit — until every level above the best that fitted is known not to
    /// fit. Where sizes fall with the bits this keeps what trying 8, 7, 6,
    /// 5, 4 in turn keeps (Discord on the cat at 15 fps: 4, then 5; 8, 7,
    /// 5 and 4 before).
    package enum ColourBits {
        package static let top = 8, lowest = 4
        /// How much larger a file is a bit more, before two sizes are
        /// known (the cat for Discord: ×1.9 from 4 bits to 5 at 15 fps, ×1.7
        /// a bit from 4 to 7 at 30 fps, ×1.15 from 7 to 8).
        package static let priorRatio = 1.6

        /// How far over the limit the level above the lowest must be
        /// predicted (`search`'s `nextRatio`) for the search to end without
        /// trying it.
        package static let skipMargin = 1.05

        /// `nextRatio`: how much larger the clip's file is predicted to be
        /// one bit above the lowest (`stillRatio`); where the lowest fits
        /// but that level is predicted over the limit by `skipMargin`, the
        /// lowest is the choice, in one try.
        package static func search(limit: Int, nextRatio: Double? = nil,
                                   encode: ([Int]) throws -> [Candidate]) throws -> Candidate? {
            var tried: [Int: Candidate] = [:]
            // The lowest alone: where it does not fit, nothing does.
            guard let first = try encode([lowest]).first, first.bytes <= limit else { return nil }
            tried[lowest] = first
            if let r = nextRatio, r.isFinite, Double(first.bytes) * r > Double(limit) * skipMargin { return first }
            // Then, alone, the level that its size says fits, at `priorRatio` a bit (the top where it is far under).
            let room = log(Double(limit) / Double(max(1, first.bytes))) / log(priorRatio)
            let guess = room.isFinite ? min(top, max(lowest + 1, lowest + Int(room.rounded(.down)))) : top
            for c in try encode([guess]) { tried[c.level] = c }
            while true {
                let fitting = tried.values.filter { $0.bytes <= limit }.max { $0.level < $1.level }
                let failing = tried.values.filter { $0.bytes > limit }.map(\.level).min() ?? (top + 1)
                // The levels not known yet: above the best that fitted, below
                // the lowest that did not (none where sizes did not fall).
                let above = (fitting?.level ?? lowest - 1) + 1
                guard above < failing else { return fitting }
                let open = (above ..< failing).filter { tried[$0] == nil }
                guard let low = open.first, let high = open.last else { return fitting }
                let p = predict(tried.values.map { ($0.level, $0.bytes) }, limit: limit)
                let round: [Int]
                if let p, p < low {
                    round = [low]
                } else {
                    let at = min(high, max(low, p ?? (low + high) / 2))
                    round = at + 1 <= high ? [at + 1, at] : (at - 1 >= low ? [at, at - 1] : [at])
                }
                for c in try encode(round) { tried[c.level] = c }
            }
        }

        /// How much larger the PNG of `still` is one bit above the lowest
        /// level than at it: the clip's own ratio, predicted from its first
        /// picture (two PNGs of one frame: milliseconds). On the cat it
        /// reads ×1.66 where the animations grow ×1.71 (LINE) and ×1.89
        /// (Discord at 15 fps): a little low, so a level it says is over
        /// the limit is over. Nil where a PNG cannot be made.
        package static func stillRatio(_ still: RGBAImage) -> Double? {
            guard let low = try? ImageIO.encodePNG(Posterize.apply(still, bits: lowest)),
                  let next = try? ImageIO.encodePNG(Posterize.apply(still, bits: lowest + 1)),
                  !low.isEmpty else { return nil }
            return Double(next.count) / Double(low.count)
        }

        /// The most bits that the sizes of `tried` (bits, bytes) say fit
        /// `limit`: the ratio a bit of the two sizes nearest the limit (the
        /// lowest levels tried over it, the pair around it, or the highest
        /// two under it), carried on from the lower; nil where the sizes do
        /// not fall with the bits.
        static func predict(_ tried: [(Int, Int)], limit: Int) -> Int? {
            let points = tried.sorted { $0.0 < $1.0 }
            let over = points.filter { $0.1 > limit }, under = points.filter { $0.1 <= limit }
            let pair: [(Int, Int)]
            if let below = under.last, let above = over.first {
                pair = [below, above]
            } else if over.count >= 2 {
                pair = Array(over.prefix(2))
            } else if under.count >= 2 {
                pair = Array(under.suffix(2))
            } else {
                return nil
            }
            let (l0, b0) = pair[0], (l1, b1) = pair[1]
            guard l1 > l0, b1 > b0, b0 > 0 else { return nil }
            let perBit = (log(Double(b1)) - log(Double(b0))) / Double(l1 - l0)
            let at = Double(l0) + (log(Double(limit)) - log(Double(b0))) / perBit
            return at.isFinite ? Int(at.rounded(.down)) : nil
        }
    }
}

/// Fewer colour levels for APNG (`bits` per channel, 8 = unchanged):
/// each value rounded to the nearest of 2^bits evenly spaced levels.
package enum Posterize {
    package static func apply(_ img: RGBAImage, bits: Int) -> RGBAImage {
        guard bits < 8 else { return img }
        let levels = Double((1 << bits) - 1)
        let table: [UInt8] = (0..<256).map { UInt8((Double($0) / 255 * levels).rounded() / levels * 255 + 0.5) }
        var px = img.pixels
        px.withUnsafeMutableBufferPointer { p in
            for i in 0..<p.count where i & 3 != 3 { p[i] = table[Int(p[i])] }
        }
        return RGBAImage(width: img.width, height: img.height, pixels: px)
    }
}
