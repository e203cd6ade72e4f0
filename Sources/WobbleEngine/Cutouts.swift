import WobbleCore
import WobbleMedia
import WobbleScript
import WobbleSystem
import WobbleVision

/// Makes a clip's cutouts (`addSketch{cutout = ...}`) once per
/// run, after the script and before any frame: each mask read (a PNG the
/// image's size: grey, or its alpha when it has one) or found by GrabCut
/// (`"auto"`), checked, and turned into a `CutoutLayer` (object and plate).
/// A bad mask is one line naming the scene's line, like the script's own
/// errors (`scene.lua:12: addSketch: cutout mask 'm.png' is 10×10, …`).
enum Cutouts {
    /// The layers of every cutout `clip` asks for, over `image`.
    /// `layer` makes each one (a front end's cache in front of `layer(_:image:)`).
    static func make(for clip: Clip, image: RGBAImage,
                     layer: (CutoutRequest, RGBAImage) throws -> CutoutLayer = { try Cutouts.layer($0, image: $1) })
        throws -> [CutoutRequest: CutoutLayer] {
        var layers: [CutoutRequest: CutoutLayer] = [:]
        for request in clip.cutoutRequests {
            layers[request] = try layer(request, image)
        }
        return layers
    }

    /// One cutout's layer, or the error naming the scene's line.
    static func layer(_ request: CutoutRequest, image: RGBAImage) throws -> CutoutLayer {
        let place = request.place.map { "\($0): " } ?? ""
        func fail(_ what: String) -> ScriptError {
            ScriptError(message: "\(place)addSketch: \(what)", kind: .finish)
        }
        let what: String
        switch request.source {
        case .auto: what = "cutout = \"auto\""
        case .file(_, let written): what = "cutout mask '\(PathBytes.display(written))'"
        case .memory: what = "the studio's cutout"
        }
        let box = pixelBox(request.shape.bbox)
        guard !box.isEmpty else {
            throw fail("\(what): the region (box \(box.x0),\(box.y0) to \(box.x1),\(box.y1)) has no area: there is nothing to cut out")
        }
        guard box.x0 >= 0, box.y0 >= 0, box.x1 <= image.width, box.y1 <= image.height else {
            throw fail("\(what): " + CutoutProblem.outsideImage(box: box, width: image.width, height: image.height).description)
        }
        let mask: GreyMask
        do {
            switch request.source {
            case .auto:
                mask = try CutoutVision.objectMask(image: image, box: box, region: request.shape)
            case .file(let path, _):
                mask = try readMask(path, what: what, width: image.width, height: image.height)
            case .memory(let m):
                guard m.mask.width == image.width, m.mask.height == image.height else {
                    throw MaskProblem(message: "\(what) is \(m.mask.width)×\(m.mask.height), but the image is \(image.width)×\(image.height)")
                }
                mask = m.mask
            }
            // One rule for every source (a file, "auto", the studio's): a
            // mask with no object is refused; one that is all object (the
            // whole picture moves, as "auto" finds for a box over the whole
            // picture) is used.
            if mask.isAllBackground {
                throw MaskProblem(message: "\(what) is all background (every pixel 0): nothing would move")
            }
            // Only the object inside the region moves: a mask whose object is
            // all elsewhere would leave the clip still.
            guard mask.hasObject(in: box) else {
                throw MaskProblem(message: "\(what) has no object inside the region (box \(box.x0),\(box.y0) to \(box.x1),\(box.y1)): nothing would move")
            }
            return try CutoutVision.layer(image: image, mask: mask)
        } catch let e as CutoutProblem {
            throw fail("\(what): \(e)")
        } catch let e as MaskProblem {
            throw fail(e.message)
        }
    }

    /// The pixels a region's bounding box touches.
    static func pixelBox(_ r: Rect) -> PixelRect {
        let limit = -(1 << 40) ... (1 << 40)
        func floor(_ v: Double) -> Int { Int(clamping: v, to: limit, rounding: .down) }
        func ceil(_ v: Double) -> Int { Int(clamping: v, to: limit, rounding: .up) }
        return PixelRect(x0: floor(r.minX), y0: floor(r.minY), x1: ceil(r.maxX), y1: ceil(r.maxY))
    }

    struct MaskProblem: Error { let message: String }

    /// A mask file: the alpha channel of an image with transparency, else its
    /// grey level; the image's size (whether it has an object is checked
    /// for every source alike, in `layer`).
    static func readMask(_ path: String, what: String, width: Int, height: Int) throws -> GreyMask {
        let img: RGBAImage
        do {
            img = try ImageIO.load(path: path)
        } catch let e as MediaError {
            // ImageIO names the file as an image: say what it was to the scene.
            var reason = e.message
            if reason.hasPrefix("image '"), let end = reason.range(of: "': ") { reason = String(reason[end.upperBound...]) }
            throw MaskProblem(message: "\(what): \(reason)")
        }
        guard img.width == width, img.height == height else {
            throw MaskProblem(message: "\(what) is \(img.width)×\(img.height), but the image is \(width)×\(height)")
        }
        let alpha = img.hasTransparentPixels
        var pixels = [UInt8](repeating: 0, count: width * height)
        img.pixels.withUnsafeBufferPointer { p in
            for i in 0 ..< width * height {
                if alpha {
                    pixels[i] = p[i * 4 + 3]
                } else {
                    let r = Int(p[i * 4]) * 299, g = Int(p[i * 4 + 1]) * 587, b = Int(p[i * 4 + 2]) * 114
                    pixels[i] = UInt8((r + g + b + 500) / 1000)
                }
            }
        }
        return GreyMask(width: width, height: height, pixels: pixels)
    }
}
