import WobbleCore
import WobbleMedia
import WobbleScript
import WobbleSystem
import WobbleVision

/// The engine's work behind the command line's small commands and option
/// values, so that the command line reads arguments and never images:
/// `--matte` parsed, `new`'s photo size, `cutout`'s mask file.
package enum CommandFiles {
    /// `--matte COLOR`: `#rrggbb`, `#rgb` or a name; a usage error lists them.
    package static func matte(_ text: String) throws -> Matte {
        guard let m = Matte.parse(text) else {
            throw UsageError("--matte: '\(text)' is not a colour (#rrggbb, #rgb, or one of \(Matte.names.keys.sorted().joined(separator: ", ")))")
        }
        return m
    }

    /// The size of the photo at `path` (read and decoded, as `image()`
    /// reads it). Throws `MediaError` naming the file.
    package static func imageSize(_ path: String) throws -> (width: Int, height: Int) {
        let image = try ImageIO.load(path: path)
        return (image.width, image.height)
    }

    /// What `wobble-run cutout` looks for: the object in a region's box
    /// (what `cutout = "auto"` finds), or the one a studio `Shift`+click at
    /// a point finds first.
    package enum CutoutQuery: Sendable, Equatable {
        case box(x: Int, y: Int, w: Int, h: Int)
        case click(x: Double, y: Double)
    }

    /// `wobble-run cutout`: the mask `query` finds in `photo`, written to
    /// `target` as a grey PNG the photo's size (255 object, 0 background).
    /// Throws `RunError` with the line to print (`shown`, the option as the
    /// user wrote it, leads it).
    /// The photo must be a regular file (a FIFO would block the read, a
    /// device never end it), as `image()` requires. `name`: who chose
    /// `target` (`OutputName`: the default `<photo>-mask.png` is made up,
    /// so a link there is replaced, never written through). `beforeWrite`
    /// runs once the mask is found, before the file is written.
    package static func writeCutoutMask(photo: String, query: CutoutQuery, shown: String, to target: String,
                                        name: OutputName = .given, beforeWrite: () -> Void = {}) throws {
        if photo != "-", case .failure(let refusal) = PathPolicy(folder: "", allowIO: false).data(photo) {
            throw RunError("photo '\(PathBytes.display(photo, controls: true))' \(refusal.message.replacingOccurrences(of: "a scene reads files only (use --image for a pipe)", with: "cutout reads files only"))")
        }
        let image: RGBAImage
        do {
            image = try ImageIO.load(path: photo)
        } catch let e as MediaError {
            throw RunError(e.message)
        }
        let mask: GreyMask
        do {
            switch query {
            case .box(let x, let y, let w, let h):
                // X + W past the largest integer is outside any photo.
                guard !x.addingReportingOverflow(w).overflow, !y.addingReportingOverflow(h).overflow else {
                    throw RunError("\(shown): the box reaches outside the \(image.width)×\(image.height) image")
                }
                // The same region `addSketch{x =, y =, w =, h =}` makes.
                let region = SketchPoints(lt: Point(Double(x), Double(y)), rt: Point(Double(x + w), Double(y)),
                                          rb: Point(Double(x + w), Double(y + h)), lb: Point(Double(x), Double(y + h))).shape
                mask = try CutoutVision.objectMask(image: image, box: PixelRect(x0: x, y0: y, x1: x + w, y1: y + h), region: region)
            case .click(let x, let y):
                guard x >= 0, y >= 0, x < Double(image.width), y < Double(image.height) else {
                    throw RunError("\(shown): the point is outside the \(image.width)×\(image.height) image")
                }
                // The first candidate, matted as the studio's click gives it.
                guard let first = try CutoutVision.clickCandidates(image: image, at: Point(x, y)).first else {
                    throw CutoutProblem.noObject
                }
                mask = try CutoutVision.clickMatte(image: image, mask: first)
                // A mask of background alone (a scene refuses it): not written.
                guard !mask.isAllBackground else {
                    throw RunError("\(shown): found no object there; try another point, or --box around it")
                }
            }
        } catch let e as CutoutProblem {
            throw RunError("\(shown): \(e)")
        }
        if let a = PathPolicy.identity(photo), let b = PathPolicy.identity(target), a.device == b.device, a.inode == b.inode {
            throw RunError("-o '\(PathBytes.display(target))' is the photo itself: nothing written")
        }
        beforeWrite()
        do {
            try AtomicFile.write(try ImageIO.encodeMaskPNG(mask), to: target, name: name)
        } catch let e as MediaError {
            throw RunError(e.message)
        }
    }
}
