import WobbleCore
import WobbleMedia
import WobbleScript
import WobbleSystem

/// A starter scene for a photo (`wobble-run new`): the image, one region
/// in the middle a third of the picture's size, `prepare()`, a poke,
/// `untilStill()`, with comments saying what to change; written only where
/// no file is.
package enum StarterScene {
    /// Why no scene was written.
    package enum Problem: Error, Equatable {
        /// A file (or a link) is at the scene's name already.
        case exists
        /// One came there while the scene was being written.
        case appeared
        /// The photo cannot be read, or the scene written: the line.
        case failed(String)
    }

    /// Writes the starter scene for `photo` at `scene`, never over a file;
    /// the photo's size. Throws a `Problem`.
    package static func write(photo: String, scene: String) throws -> (width: Int, height: Int) {
        if Posix.kind(scene, follow: false) != nil { throw Problem.exists }
        // The policy the scene's image() will apply (a FIFO or a device
        // would block the read, or never end).
        if case .failure(let refusal) = PathPolicy(folder: "", allowIO: false).data(photo) {
            throw Problem.failed("photo '\(ScenePaths.shown(photo))' \(refusal.message)")
        }
        let image: (width: Int, height: Int)
        do {
            image = try CommandFiles.imageSize(photo)
        } catch let e as MediaError {
            throw Problem.failed(e.message)
        } catch {
            throw Problem.failed("cannot read '\(ScenePaths.shown(photo))': \(error)")
        }
        let text = text(photo: imageReference(photo: photo, scene: scene), width: image.width, height: image.height,
                        scene: ScenePaths.shellWord(ScenePaths.name(scene)), photoName: ScenePaths.name(photo))
        do {
            // The one guarded writer: a temporary file beside the scene,
            // renamed only where nothing is (`.fresh`): a file or link made
            // meanwhile is not written over or through, and a failed write
            // leaves no half scene.
            try AtomicFile.write(Array(text.utf8), to: scene, name: .fresh)
        } catch is MediaError where Posix.kind(scene, follow: false) != nil {
            throw Problem.appeared
        } catch let e as MediaError {
            throw Problem.failed("cannot write '\(ScenePaths.shown(scene))': \(e.message)")
        } catch {
            throw Problem.failed("cannot write '\(ScenePaths.shown(scene))': \(error)")
        }
        return image
    }

    /// How the scene names the photo: its name when both are in one
    /// folder, else its absolute path.
    package static func imageReference(photo: String, scene: String) -> String {
        let p = ScenePaths.absolute(photo), s = ScenePaths.absolute(scene)
        return ScenePaths.folder(p) == ScenePaths.folder(s) ? ScenePaths.name(p) : p
    }

    /// The starter scene's text.
    package static func text(photo: String, width w: Int, height h: Int, scene: String, photoName: String) -> String {
        let rw = max(1, w / 3), rh = max(1, h / 3)
        let rx = (w - rw) / 2, ry = (h - rh) / 2
        let cx = rx + rw / 2, cy = ry + rh / 2
        let push = max(1, rw / 6)
        return """
        -- A starter scene made by `wobble-run new` for \(PathBytes.display(photoName, controls: true)).
        -- Try it:  wobble-run edit \(scene)   (a window: drag the handles, poke, Ctrl+S saves)
        --          wobble-run \(scene)        (renders the clip)

        image(\(LuaLiteral.string(photo)))   -- \(w)x\(h) pixels

        -- One soft region in the middle, a third of the picture's size: move
        -- and size it over what should wobble (x, y: its top-left corner; w, h:
        -- its size, in image pixels), or drag its handles in the studio.
        -- Keys to add: strength = 0.15 (how far it swings), duration = 1.5
        -- (seconds), motion = "spring". Add more regions with more addSketch lines.
        local region = addSketch{x = \(rx), y = \(ry), w = \(rw), h = \(rh)}

        -- From here on the regions are live.
        prepare()

        -- A poke: a drag from the region's middle \(push) pixels to the right
        -- (x0, y0, x1, y1). Change the numbers for another direction, or push
        -- the region itself: impulse(region, 0, 1) pushes it down.
        touch(\(cx), \(cy), \(cx + push), \(cy))

        -- The clip ends once everything rests.
        untilStill()

        """
    }
}
