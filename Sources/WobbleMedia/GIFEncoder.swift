import Foundation
import WobbleCore

/// The GIF encoder proper, run on one thread at a time: maps each frame to
/// the palette, and writes it as the smallest rectangle that changed on the
/// displayed canvas, unchanged pixels as the transparent index. A changed
/// pixel whose on-screen colour is nearly as good as its new one is left
/// unchanged too (`keepTolerance`).
///
/// Memory is flat: the still (RGBA and indices), the displayed canvas, the
/// pending frame (RGBA and indices), the current one and its palette mapping
/// (indices), whatever the frame count.
///
/// A frame that comes with the boxes where it differs from the frame before
/// (`add(_:index:changed:)`) is mapped to the palette only there, and the
/// changed rectangle is looked for only there and where the canvas differs
/// from the mapped frame (`canvasOff`): the same bytes as diffing whole
/// frames, which is what a frame without boxes gets.
///
/// A frame is written only when the next one is known (one frame of
/// lookahead), because its disposal depends on it: when the next frame
/// turns opaque pixels transparent, this frame is disposed "restore to
/// background" over a rectangle covering them; otherwise it is kept
/// ("do not dispose") and the next frame draws only what changed.
final class GIFEncoder {
    let width: Int, height: Int
    let fps: Double
    private let still: RGBAImage
    private let palette: GIFPalette
    private let nearest: GIFNearestColor
    private let writer: GIFWriter
    private let t: UInt8

    /// What a decoder shows now (after the last written frame's disposal).
    private var canvas: [UInt8]
    /// The frame waiting for its successor: indices, timeline index, pixels.
    private var pending: [UInt8]
    private var pendingIndex: Int?
    private var pendingFrame: RGBAImage?
    /// See `GIFSink.keepTolerance`.
    private let keepTolerance: Int32
    /// Scratch: the newest frame's indices, and the rectangle's pixels.
    private var current: [UInt8]
    /// The newest frame's palette mapping, as `map` made it (`pending` may
    /// differ where `keepCloseColors` kept the screen's colour), and how many
    /// of its pixels are transparent.
    private var mapped: [UInt8]
    private var mappedTransparent = 0
    /// Where the pending frame differs from the frame before it (nil: it
    /// may differ anywhere).
    private var pendingChanged: PixelRect?
    /// A box holding every pixel where the canvas differs from the pending
    /// frame's mapping (`mapped` of its time): pixels whose screen colour was
    /// kept, and a rectangle disposed to background.
    private var canvasOff = PixelRect(x0: 0, y0: 0, x1: 0, y1: 0)
    private var rectPixels: [UInt8] = []
    private var framesWritten = 0
    /// Per row of the still: how many of its pixels are transparent.
    private let stillRowTransparent: [Int]

    /// Starts encoding into `writer` (header and palette already written).
    /// `keepTolerance` 0 keeps every change of index.
    init(still: RGBAImage, palette: GIFPalette, writer: GIFWriter, fps: Double, keepTolerance: Int32) {
        self.keepTolerance = keepTolerance
        width = still.width
        height = still.height
        self.fps = fps
        self.still = still
        self.palette = palette
        self.writer = writer
        nearest = GIFNearestColor(rgb: palette.rgb)
        self.t = palette.transparent
        let t = palette.transparent, w = still.width
        stillRowTransparent = (0..<still.height).map { y in
            palette.stillIndices[(y * w)..<(y * w + w)].reduce(0) { $0 + ($1 == t ? 1 : 0) }
        }
        canvas = [UInt8](repeating: palette.transparent, count: still.width * still.height)
        pending = canvas
        current = canvas
        mapped = canvas
    }

    /// Adds frame `index` (timeline index) of the clip; `changed`: the boxes
    /// outside which it equals the frame added before (nil: not known).
    func add(_ frame: RGBAImage, index: Int, changed: [PixelRect]? = nil) throws {
        let whole = PixelRect(width: width, height: height)
        let boxes = changed.map { PixelRect.merged($0.map { $0.clipped(width: width, height: height) }) }
        if let boxes, pendingIndex != nil {
            for b in boxes {
                mappedTransparent -= count(t, in: mapped, box: b)
                mappedTransparent += map(frame, into: &mapped, box: b)
            }
        } else {
            mappedTransparent = map(frame, into: &mapped, box: whole)
        }
        let changedBox = boxes.map { $0.reduce(PixelRect(x0: 0, y0: 0, x1: 0, y1: 0)) { $0.union($1) } }
        current.withUnsafeMutableBufferPointer { c in
            mapped.withUnsafeBufferPointer { m in c.baseAddress!.update(from: m.baseAddress!, count: m.count) }
        }
        if let pi = pendingIndex {
            try emit(index: pi, clearForNext: mappedTransparent > 0, nextChanged: changedBox ?? whole)
        }
        swap(&pending, &current)
        pendingIndex = index
        pendingFrame = frame
        pendingChanged = changedBox
    }

    /// How many of `indices`' pixels in `box` are `value`.
    private func count(_ value: UInt8, in indices: [UInt8], box: PixelRect) -> Int {
        var n = 0
        for y in box.y0 ..< box.y1 {
            for x in box.x0 ..< box.x1 where indices[y * width + x] == value { n += 1 }
        }
        return n
    }

    /// Writes the last frame and the trailer.
    func finish() throws {
        if let pi = pendingIndex {
            try emit(index: pi, clearForNext: false, nextChanged: PixelRect(width: width, height: height))
            pendingIndex = nil
        }
        try writer.close()
    }

    /// Drops the stream; nothing more is written.
    func discard() { writer.discard() }

    // MARK: - Palette mapping

    /// Maps `frame` to palette indices: a pixel equal to the still's keeps
    /// the still's dithered index (stable: no flicker where nothing moves),
    /// alpha < 128 is the transparent index, any other pixel gets its
    /// nearest palette colour. Only the pixels of `box` are mapped; returns
    /// how many of them are transparent.
    private func map(_ frame: RGBAImage, into out: inout [UInt8], box: PixelRect) -> Int {
        let w = width, t = self.t, whole = box.x0 == 0 && box.x1 == w
        let bw = box.width
        var transparentCount = 0
        frame.pixels.withUnsafeBytes { fb in
            still.pixels.withUnsafeBytes { sb in
                palette.stillIndices.withUnsafeBufferPointer { si in
                    out.withUnsafeMutableBufferPointer { o in
                        let f32 = fb.bindMemory(to: UInt32.self)
                        let s32 = sb.bindMemory(to: UInt32.self)
                        let fp = fb.bindMemory(to: UInt8.self)
                        for y in box.y0..<box.y1 {
                            let row = y * w + box.x0
                            if memcmp(fb.baseAddress! + row * 4, sb.baseAddress! + row * 4, bw * 4) == 0 {
                                // The row's part unchanged from the still.
                                (o.baseAddress! + row).update(from: si.baseAddress! + row, count: bw)
                                if whole {
                                    transparentCount += stillRowTransparent[y]
                                } else {
                                    for i in row..<(row + bw) where si[i] == t { transparentCount += 1 }
                                }
                                continue
                            }
                            for i in row..<(row + bw) {
                                if f32[i] == s32[i] {
                                    let v = si[i]
                                    o[i] = v
                                    if v == t { transparentCount += 1 }
                                } else if fp[i * 4 + 3] < 128 {
                                    o[i] = t
                                    transparentCount += 1
                                } else {
                                    o[i] = nearest.index(fp[i * 4], fp[i * 4 + 1], fp[i * 4 + 2])
                                }
                            }
                        }
                    }
                }
            }
        }
        return transparentCount
    }

    // MARK: - Frame output

    /// Bounding box of the pixels where `a` and `b` differ (with
    /// `becomingTransparent`: where `b` is transparent and `a` is not),
    /// looked for in `within` only (which must hold all of them).
    private func diffBox(_ a: [UInt8], _ b: [UInt8], becomingTransparent: Bool, within box: PixelRect) -> PixelRect {
        var r = PixelRect.empty
        let w = width, t = self.t
        guard !box.isEmpty else { return r }
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                for y in box.y0..<box.y1 {
                    let row = y * w
                    if !becomingTransparent && memcmp(a.baseAddress! + row + box.x0, b.baseAddress! + row + box.x0, box.width) == 0 { continue }
                    var first = -1, last = -1
                    for x in box.x0..<box.x1 {
                        let differs = becomingTransparent ? (b[row + x] == t && a[row + x] != t) : (a[row + x] != b[row + x])
                        if differs {
                            if first < 0 { first = x }
                            last = x
                        }
                    }
                    if first >= 0 { r = r.union(PixelRect(x0: first, y0: y, x1: last + 1, y1: y + 1)) }
                }
            }
        }
        return r
    }

    /// Where the pending frame changed a pixel on screen to another opaque
    /// colour, keeps the screen's colour when it is within `keepTolerance`
    /// of as good as the new one, for the pending frame's true colour. The
    /// error stays bounded: it is always measured against the true colour,
    /// never against what was kept before. Looks in `within` only (which
    /// must hold every pixel where the canvas and the pending frame differ);
    /// returns a box of the pixels kept.
    private func keepCloseColors(within box: PixelRect) -> PixelRect {
        let w = width, t = self.t, beta = keepTolerance
        var kept = PixelRect.empty
        guard let frame = pendingFrame, !box.isEmpty else { return kept }
        frame.pixels.withUnsafeBufferPointer { f in
            palette.rgb.withUnsafeBufferPointer { pal in
                canvas.withUnsafeBufferPointer { c in
                    pending.withUnsafeMutableBufferPointer { p in
                        for y in box.y0..<box.y1 {
                            let row = y * w
                            if memcmp(c.baseAddress! + row + box.x0, p.baseAddress! + row + box.x0, box.width) == 0 { continue }
                            for i in (row + box.x0)..<(row + box.x1) {
                                let cv = c[i], pv = p[i]
                                if cv == pv || cv == t || pv == t { continue }
                                let r = Int32(f[i * 4]), g = Int32(f[i * 4 + 1]), b = Int32(f[i * 4 + 2])
                                let ci = Int(cv) * 3, pi = Int(pv) * 3
                                let dr = Int32(pal[ci]) &- r, dg = Int32(pal[ci + 1]) &- g, db = Int32(pal[ci + 2]) &- b
                                let er = Int32(pal[pi]) &- r, eg = Int32(pal[pi + 1]) &- g, eb = Int32(pal[pi + 2]) &- b
                                if dr &* dr &+ dg &* dg &+ db &* db <= er &* er &+ eg &* eg &+ eb &* eb &+ beta {
                                    p[i] = cv
                                    kept = kept.union(PixelRect(x0: i - row, y0: y, x1: i - row + 1, y1: y + 1))
                                }
                            }
                        }
                    }
                }
            }
        }
        return kept
    }

    /// Writes the pending frame. With `clearForNext`, the next frame (in
    /// `current`) may turn opaque pixels transparent: the pending frame then
    /// covers them and is disposed to background. `nextChanged` holds
    /// every pixel where the next frame differs from the pending one.
    private func emit(index: Int, clearForNext: Bool, nextChanged: PixelRect) throws {
        let w = width
        var rect: PixelRect
        let first = framesWritten == 0
        // The canvas can differ from the pending frame only where it differed
        // from the frame before's mapping, or where the frame changed.
        let suspect = canvasOff.union(pendingChanged ?? PixelRect(width: width, height: height))
        var kept = PixelRect.empty
        if first {
            rect = PixelRect(width: width, height: height)
        } else {
            if keepTolerance > 0 { kept = keepCloseColors(within: suspect) }
            rect = diffBox(canvas, pending, becomingTransparent: false, within: suspect)
        }
        var disposal = 1
        if clearForNext {
            // A kept pixel is opaque in both frames: only the next frame's
            // changes can turn pixels transparent.
            let clear = diffBox(pending, current, becomingTransparent: true, within: nextChanged)
            if !clear.isEmpty {
                disposal = 2
                rect = rect.union(clear)
            }
        }
        if rect.isEmpty {
            // Nothing changed: one transparent pixel, still with its delay.
            rect = PixelRect(x0: 0, y0: 0, x1: 1, y1: 1)
        }
        let rw = rect.width, rh = rect.height
        if rectPixels.count != rw * rh { rectPixels = [UInt8](repeating: 0, count: rw * rh) }
        let t = self.t
        rectPixels.withUnsafeMutableBufferPointer { out in
            pending.withUnsafeBufferPointer { p in
                canvas.withUnsafeMutableBufferPointer { c in
                    var k = 0
                    for y in rect.y0..<rect.y1 {
                        let row = y * w
                        for x in rect.x0..<rect.x1 {
                            let v = p[row + x]
                            // Invariant: pending transparent ⇒ canvas transparent.
                            out[k] = (first || v != c[row + x]) ? v : t
                            c[row + x] = disposal == 2 ? t : v
                            k += 1
                        }
                    }
                }
            }
        }
        try writer.putFrame(left: rect.x0, top: rect.y0, width: rw, height: rh,
                            delay: GIFSink.delay(index: index, fps: fps), disposal: disposal,
                            transparent: t, pixels: &rectPixels)
        framesWritten += 1
        canvasOff = disposal == 2 ? kept.union(rect) : kept
    }
}
