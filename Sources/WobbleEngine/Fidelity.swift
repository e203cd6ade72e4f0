import Foundation
import WobbleCore
import WobbleSystem
import WobbleMedia
import Synchronization

/// How close a try's frames are to the rendered ones.
extension PresetRun {
    /// How close `c`'s frames, as a player shows them, are to `frames`:
    /// APNG is lossless (its frames are the posterized ones), a GIF is
    /// decoded back (`GIFReader`).
    package func fidelity(of c: Candidate, to frames: FrameCollector) throws -> Double {
        var sum = Fidelity()
        var replay = frames.replay()
        switch c.format {
        case .apng:
            for k in 0..<frames.count {
                let f = replay.frame(k).image
                sum.add(Posterize.apply(f, bits: c.level), f)
            }
        case .gif:
            var k = 0
            try GIFReader.frames(bytes: c.data, shown: "the GIF try") { shown, _ in
                if k < frames.count { sum.add(shown, replay.frame(k).image) }
                k += 1
            }
        default:
            return 0
        }
        return sum.psnr
    }
}

/// The PSNR of frames against the frames meant (dB over every channel of
/// every frame, colour premultiplied by alpha: a colour counts as much as
/// it shows; `exact` when they are equal).
package struct Fidelity {
    package static let exact = 99.0
    private var squared = 0.0
    private var values = 0

    package mutating func add(_ got: RGBAImage, _ meant: RGBAImage) {
        guard got.width == meant.width, got.height == meant.height else { values += 1; squared += 255 * 255; return }
        var se = 0.0
        got.pixels.withUnsafeBufferPointer { g in
            meant.pixels.withUnsafeBufferPointer { m in
                var i = 0
                while i < g.count {
                    let ga = Int(g[i + 3]), ma = Int(m[i + 3])
                    for c in 0..<3 {
                        let d = Double(Int(g[i + c]) * ga - Int(m[i + c]) * ma) / 255
                        se += d * d
                    }
                    let da = Double(ga - ma)
                    se += da * da
                    i += 4
                }
            }
        }
        squared += se
        values += got.pixels.count
    }

    package var psnr: Double {
        guard values > 0, squared > 0 else { return Self.exact }
        return min(Self.exact, 10 * log10(255 * 255 / (squared / Double(values))))
    }
}
