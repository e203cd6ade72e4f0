import Foundation
import WobbleCore
import WobbleSystem
import WobbleMedia
import Synchronization

/// Collects the rendered frames in memory, centred on a transparent canvas,
/// each kept once and only where it changed: the first frame (and any whose
/// changed boxes are not known) whole, each later one as the boxes where it
/// differs from the frame before (`FrameSink.write(_:index:changed:)`).
/// With `packs`, the changed pixels of the first frames are kept as they
/// are, up to `unpackedFrames` whole frames' bytes, and those past that
/// packed (`PackedPixels`, about half their size on photos): each try of a
/// search unpacks them again, so what fits in the memory goal costs
/// nothing to pack and unpack. A clip whose regions cover a fifth of the
/// picture keeps about a fifth of its frames' pixels, most of it packed to
/// about half that. `replay()` gives them back whole, with their boxes.
package final class FrameCollector {
    package let canvas: (Int, Int)
    /// One frame: whole, or the boxes (canvas pixels) and their pixels, as
    /// they are or packed (`PackedPixels`: about half their size on photos).
    private struct Kept {
        var whole: RGBAImage?
        var boxes: [(PixelRect, PackedPixels)]
    }
    private var kept: [Kept] = []
    private(set) var still: RGBAImage?
    /// With `countsChanges`, for each frame, how many of its pixels differ
    /// from the frame before (frame 0: none; a frame kept whole with no
    /// frame before it of its size: all): a measure of what each frame
    /// adds to an animation's file, for predicting its size from a sample
    /// of frames (`PresetRun.WebPSample`). Empty without.
    package private(set) var changedPixels: [Int] = []
    /// Whether `changedPixels` is counted (the frame before is held while
    /// the frames come).
    package let countsChanges: Bool
    /// The frame before, as given (not padded), for `changedPixels`.
    private var previous: RGBAImage?

    /// Whether the changed pixels past the first `unpackedFrames` frames'
    /// bytes are packed (`PackedPixels`).
    package let packs: Bool
    /// How many whole canvases' bytes of changed pixels a packing
    /// collector keeps as they are before it packs.
    package static let unpackedFrames = 8
    /// The bytes of changed pixels still kept as they are before packing.
    private var unpackedLeft: Int

    package init(canvas: (Int, Int), packs: Bool = true, countsChanges: Bool = true) {
        self.canvas = canvas
        self.packs = packs
        self.countsChanges = countsChanges
        unpackedLeft = packs ? Self.unpackedFrames * canvas.0 * canvas.1 * 4 : .max
    }

    /// The bytes the kept frames take (their pixels as kept: packed or not).
    package var storedBytes: Int {
        kept.reduce(0) { sum, k in sum + (k.whole?.pixels.count ?? 0) + k.boxes.reduce(0) { $0 + $1.1.storedBytes } }
    }

    /// The frames collected.
    package var count: Int { kept.count }

    package func start(_ f: OutputPlan.Frames, still: () throws -> RGBAImage) throws -> FrameSink {
        self.still = pad(try still())
        return Sink(self)
    }

    /// Where a picture of `w × h` sits on the canvas.
    private func offset(_ w: Int, _ h: Int) -> (Int, Int) { ((canvas.0 - w) / 2, (canvas.1 - h) / 2) }

    package func pad(_ img: RGBAImage) -> RGBAImage {
        let (cw, ch) = canvas
        if img.width == cw && img.height == ch { return img }
        var px = [UInt8](repeating: 0, count: cw * ch * 4)
        let (ox, oy) = offset(img.width, img.height)
        for y in 0..<min(img.height, ch) {
            let s = y * img.width * 4, d = ((y + oy) * cw + ox) * 4
            px.replaceSubrange(d..<(d + min(img.width, cw) * 4), with: img.pixels[s..<(s + min(img.width, cw) * 4)])
        }
        return RGBAImage(width: cw, height: ch, pixels: px)
    }

    /// Keeps `frame`: whole where `changed` is nil or it is the first,
    /// else only the pixels inside `changed`.
    fileprivate func add(_ frame: RGBAImage, changed: [PixelRect]?) {
        if countsChanges {
            changedPixels.append(kept.isEmpty ? 0 : Self.differing(frame, from: previous, within: changed))
            previous = frame
        }
        guard let changed, !kept.isEmpty, frame.width <= canvas.0, frame.height <= canvas.1 else {
            kept.append(Kept(whole: pad(frame), boxes: []))
            return
        }
        let (ox, oy) = offset(frame.width, frame.height)
        var boxes: [(PixelRect, PackedPixels)] = []
        for r in changed {
            let x0 = max(0, r.x0), y0 = max(0, r.y0), x1 = min(frame.width, r.x1), y1 = min(frame.height, r.y1)
            guard x1 > x0, y1 > y0 else { continue }
            var px: [UInt8] = []
            px.reserveCapacity((x1 - x0) * (y1 - y0) * 4)
            for y in y0..<y1 { px += frame.pixels[((y * frame.width + x0) * 4)..<((y * frame.width + x1) * 4)] }
            // As they are while they fit in what is left unpacked.
            let pack = px.count > unpackedLeft
            if !pack { unpackedLeft -= px.count }
            boxes.append((PixelRect(x0: x0 + ox, y0: y0 + oy, x1: x1 + ox, y1: y1 + oy), PackedPixels(px, rowBytes: (x1 - x0) * 4, pack: pack)))
        }
        kept.append(Kept(whole: nil, boxes: boxes))
    }

    /// The pixels of `frame` that differ from `before` inside `boxes` (nil:
    /// the whole frame; boxes that overlap count their common pixels once
    /// each); all of them where `before` is missing or of another size.
    static func differing(_ frame: RGBAImage, from before: RGBAImage?, within boxes: [PixelRect]?) -> Int {
        let w = frame.width, h = frame.height
        guard let before, before.width == w, before.height == h else { return w * h }
        let boxes = boxes ?? [PixelRect(x0: 0, y0: 0, x1: w, y1: h)]
        var count = 0
        frame.pixels.withUnsafeBytes { fb in
            before.pixels.withUnsafeBytes { bb in
                let f = fb.bindMemory(to: UInt32.self), b = bb.bindMemory(to: UInt32.self)
                for r in boxes {
                    let x0 = max(0, r.x0), y0 = max(0, r.y0), x1 = min(w, r.x1), y1 = min(h, r.y1)
                    guard x1 > x0, y1 > y0 else { continue }
                    for y in y0..<y1 {
                        let row = y * w
                        for x in x0..<x1 where f[row + x] != b[row + x] { count += 1 }
                    }
                }
            }
        }
        return count
    }

    /// The frames whole again, in order (each replay its own running frame).
    package func replay() -> Replay { Replay(owner: self) }

    package struct Replay {
        fileprivate let owner: FrameCollector
        private var current: RGBAImage?
        private var next = 0

        fileprivate init(owner: FrameCollector) { self.owner = owner }

        /// Frame `k` (0, 1, 2, … in order) and the canvas boxes outside
        /// which it equals frame `k - 1` (nil: all).
        package mutating func frame(_ k: Int) -> (image: RGBAImage, changed: [PixelRect]?) {
            precondition(k == next, "frames are replayed in order")
            next = k + 1
            let kept = owner.kept[k]
            if let whole = kept.whole {
                current = whole
                return (whole, nil)
            }
            // The running frame taken out first: where the caller has let
            // go of the last frame it is the only owner of its pixels,
            // updated in place instead of copied.
            var img = current!
            current = nil
            let cw = img.width
            img.pixels.withUnsafeMutableBytes { dst in
                for (r, packed) in kept.boxes {
                    packed.unpack(into: dst.baseAddress! + (r.y0 * cw + r.x0) * 4, rowStride: cw * 4)
                }
            }
            current = img
            return (img, kept.boxes.map(\.0))
        }
    }

    private final class Sink: FrameSink {
        package let owner: FrameCollector
        package init(_ owner: FrameCollector) { self.owner = owner }
        package func write(_ frame: RGBAImage, index: Int) throws { owner.add(frame, changed: nil) }
        package func write(_ frame: RGBAImage, index: Int, changed: [PixelRect]?) throws { owner.add(frame, changed: changed) }
        package func finish() throws { owner.previous = nil }
        package func abort() {
            owner.kept.removeAll()
            owner.changedPixels.removeAll()
            owner.previous = nil
        }
        package var bytesWritten: Int? { nil }
    }
}
