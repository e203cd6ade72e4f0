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
        /// with the quality.
        package func predict() -> Int {
            let lo = fitting, hi = failing
            guard hi - lo > 1 else { return max(lowestQuality, lo) }
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
            var q = (lo + hi) / 2
            if pair.count == 2, pair[1].value > pair[0].value, pair[1].key > pair[0].key, pair[0].value > 0 {
                let slope = (log(Double(pair[1].value)) - log(Double(pair[0].value))) / Double(pair[1].key - pair[0].key)
                let at = Double(pair[0].key) + (log(Double(limit)) - log(Double(pair[0].value))) / slope
                if at.isFinite { q = Int(at.rounded(.down)) }
            }
            return min(hi - 1, max(lo + 1, max(lowestQuality, q)))
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
    /// most bits whose file fits. Round 1 tries 8 and 7 bits; a file's size
    /// falls smoothly with the bits, close to a constant ratio a bit, so
    /// each later round tries the level that the two sizes nearest the
    /// limit say fits, beside the level above it (a prediction a level too
    /// low), or the lowest unknown level alone where even that is predicted
    /// not to fit — until every level above the best that fitted is known
    /// not to fit. Where sizes fall with the bits this keeps what trying
    /// 8, 7, 6, 5, 4 in turn keeps, in fewer tries (Discord on the cat at
    /// 15 fps: 8, 7, then 5 and 4, instead of a round of 6 and 5 between).
    package enum ColourBits {
        package static let top = 8, lowest = 4

        package static func search(limit: Int, encode: ([Int]) throws -> [Candidate]) throws -> Candidate? {
            var tried: [Int: Candidate] = [:]
            for c in try encode([top, top - 1]) { tried[c.level] = c }
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

        /// The most bits that the sizes of `tried` (bits, bytes) say fit
        /// `limit`: the ratio a bit of the two sizes nearest the limit (the
        /// lowest levels tried over it, or the pair around it), carried on
        /// from the lower; nil where the sizes do not fall with the bits.
        static func predict(_ tried: [(Int, Int)], limit: Int) -> Int? {
            let points = tried.sorted { $0.0 < $1.0 }
            let over = points.filter { $0.1 > limit }, under = points.filter { $0.1 <= limit }
            let pair: [(Int, Int)]
            if let below = under.last, let above = over.first {
                pair = [below, above]
            } else if over.count >= 2 {
                pair = Array(over.prefix(2))
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
