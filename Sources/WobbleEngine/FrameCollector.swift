import Foundation
import WobbleCore
import WobbleSystem
import WobbleMedia
import Synchronization

/// Collects the rendered frames in memory, centred on a transparent canvas,
/// each kept once and only where it changed: the first frame (and any whose
/// changed boxes are not known) whole, each later one as the boxes where it
/// differs from the frame before (`FrameSink.write(_:index:changed:)`),
/// those pixels packed (`PackedPixels`, about half their size on photos).
/// A clip whose regions cover a fifth of the picture keeps about a fifth
/// of its frames' pixels, packed to about half that. `replay()` gives them back whole, with their boxes.
package final class FrameCollector {
    package let canvas: (Int, Int)
    /// One frame: whole, or the boxes (canvas pixels) and their pixels,
    /// packed (`PackedPixels`: about half their size on photos).
    private struct Kept {
        var whole: RGBAImage?
        var boxes: [(PixelRect, PackedPixels)]
    }
    private var kept: [Kept] = []
    private(set) var still: RGBAImage?

    /// Whether the changed pixels are packed (`PackedPixels`).
    package let packs: Bool

    package init(canvas: (Int, Int), packs: Bool = true) {
        self.canvas = canvas
        self.packs = packs
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
            boxes.append((PixelRect(x0: x0 + ox, y0: y0 + oy, x1: x1 + ox, y1: y1 + oy), PackedPixels(px, rowBytes: (x1 - x0) * 4, pack: packs)))
        }
        kept.append(Kept(whole: nil, boxes: boxes))
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
            var img = current!
            let cw = img.width
            img.pixels.withUnsafeMutableBufferPointer { dst in
                for (r, packed) in kept.boxes {
                    let px = packed.unpack()
                    let row = (r.x1 - r.x0) * 4
                    px.withUnsafeBufferPointer { src in
                        for y in r.y0..<r.y1 {
                            let d = (y * cw + r.x0) * 4, s = (y - r.y0) * row
                            UnsafeMutableRawPointer(dst.baseAddress! + d).copyMemory(from: src.baseAddress! + s, byteCount: row)
                        }
                    }
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
        package func finish() throws {}
        package func abort() { owner.kept.removeAll() }
        package var bytesWritten: Int? { nil }
    }
}
