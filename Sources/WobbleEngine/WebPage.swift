import Foundation
import WobbleCore
import WobbleMedia
import WobbleRender
import WobbleSystem
import WobbleWeb

/// The web outputs (`-o clip.html`, `--format web` into a folder): a scene
/// bundle (`SceneBundle`) and the player (`Web/render.js`,
/// `Web/wobble-motion.js`, `Web/wobble-view.js` and the shaders, as one
/// script) that plays it with no server.
package enum WebPage {
    /// The player as one ES module: the shader files as `WOBBLE_SHADERS`,
    /// then the three player files with their imports and exports taken
    /// out and their comment lines dropped (a page's own script cannot
    /// import modules beside a file opened from disk).
    package static var player: String {
        var out = "// wobble-run web player: <wobble-view>. See docs/web.md.\n"
        let shaders = ShaderData.sources.filter { ["quad.vert", "copy.frag", "wobble.frag", "resolve.frag", "common.glsl"].contains($0.key) }
            .mapValues { text in text.split(separator: "\n", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty && !$0.hasPrefix("//") }.joined(separator: "\n") }
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        out += "const WOBBLE_SHADERS = " + String(decoding: (try? e.encode(shaders)) ?? Data("{}".utf8), as: UTF8.self) + ";\n"
        for name in ["render.js", "wobble-motion.js", "wobble-view.js"] {
            for line in (WebAssets.all[name] ?? "").split(separator: "\n", omittingEmptySubsequences: false) {
                let t = line.trimmingCharacters(in: .whitespaces)
                if t.isEmpty || t.hasPrefix("//") || t.hasPrefix("import ") { continue }
                // Indentation dropped too: no template literal spans lines.
                out += (t.hasPrefix("export ") ? String(t.dropFirst("export ".count)) : t) + "\n"
            }
        }
        return out
    }

    /// The page around a `<wobble-view>` whose bundle is `src`, with the
    /// scripts `head` (inline or a `<script src>`) and `body`.
    static func page(title: String, width: Int, viewAttributes: String, scripts: String) -> String {
        """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(escape(title))</title>
        <link rel="icon" href="data:,">
        <style>html,body{margin:0;background:#1d1d1f}body{display:flex;align-items:center;justify-content:center;min-height:100vh}wobble-view{width:\(width)px;max-width:100vw}</style>
        </head>
        <body>
        <wobble-view \(viewAttributes)></wobble-view>
        \(scripts)
        </body>
        </html>

        """
    }

    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }

    /// Text safe inside a `<script>` element (no `</` to end it early).
    static func scriptText(_ s: String) -> String { s.replacingOccurrences(of: "</", with: "<\\/") }

    /// How close the picture stays to the source when `--quality` gives no
    /// quality: PSNR in dB of the premultiplied colour.
    package static let pictureDecibels = 41.5

    /// `image` as WebP bytes: at `quality` when given; else at the lowest
    /// quality from 80 to 100 whose decoded pixels stay within
    /// `pictureDecibels` of the image (lossy colour, lossless alpha), or
    /// lossless when none does. A photo the size of the cat takes about 94.
    /// A stop asked of `control` ends it before the next encode.
    static func picture(_ image: RGBAImage, quality: Int?, control: RunControl) throws -> [UInt8] {
        do {
            try control.check()
            if let quality { return try ImageIO.encodeWebP(image, quality: quality) }
            var tried: [Int: [UInt8]] = [:]
            func good(_ q: Int) throws -> Bool {
                try control.check()
                let bytes = try ImageIO.encodeWebP(image, quality: q)
                tried[q] = bytes
                guard let back = ImageIO.decodeWebP(bytes) else { return false }
                return psnr(image, back) >= pictureDecibels
            }
            guard try good(100) else {
                try control.check()
                return try ImageIO.encodeWebP(image, quality: nil)
            }
            var lo = 80, hi = 100
            if try good(lo) { return tried[lo] ?? [] }
            // good(hi), not good(lo): the lowest good quality in (lo, hi].
            while hi - lo > 1 {
                let mid = (lo + hi) / 2
                if try good(mid) { hi = mid } else { lo = mid }
            }
            return tried[hi] ?? []
        } catch let e as MediaError {
            throw RunError(e.message)
        }
    }

    /// PSNR (dB) of two images of one size on premultiplied RGB (what a
    /// transparent pixel hides does not count).
    static func psnr(_ a: RGBAImage, _ b: RGBAImage) -> Double {
        PSNR.of(a, b, channels: .premultipliedRGB)
    }

    /// `-o clip.html`: one file, nothing from the network, shown
    /// `shownWidth` CSS pixels wide (the picture's width when nil; the
    /// picture inside stays whole). A stop asked of
    /// `control` (a signal, a cancel) before the page is whole writes
    /// nothing (`Interrupted`).
    package static func writePage(clip: Clip, source: RGBAImage, title: String, shownWidth: Int? = nil, quality: Int?, to path: String,
                                  name: OutputName, control: RunControl) throws {
        let webp = try picture(source, quality: quality, control: control)
        let bundle = try SceneBundle(clip: clip, source: source, picture: "data:image/webp;base64," + Data(webp).base64EncodedString())
        let json = String(decoding: try bundle.json(), as: UTF8.self)
        guard let packed = Gzip.compress(Array(player.utf8)) else { throw RunError("out of memory packing the web player") }
        // The player gzipped (a third of its size), unpacked by the
        // browser's DecompressionStream and run once.
        let loader = """
        <script type="application/octet-stream" id="wobble-player">\(Data(packed).base64EncodedString())</script>
        <script>(async()=>{const b=Uint8Array.from(atob(document.getElementById("wobble-player").textContent),c=>c.charCodeAt(0));\
        (0,eval)(await new Response(new Blob([b]).stream().pipeThrough(new DecompressionStream("gzip"))).text())})()</script>
        """
        let html = page(title: title, width: shownWidth ?? source.width, viewAttributes: "src=\"#wobble-scene\"",
                        scripts: "<script type=\"application/json\" id=\"wobble-scene\">\(scriptText(json))</script>\n" + loader)
        try control.check()
        try AtomicFile.write(Array(html.utf8), to: path, name: name)
    }

    /// `--format web -o dir/`: `index.html`, `wobble-view.js`, `scene.json`
    /// and `picture.webp` in the folder (made when missing). Every file's
    /// bytes are made before the folder is touched: a stop asked of
    /// `control` before then leaves no folder and no file.
    package static func writeFolder(clip: Clip, source: RGBAImage, title: String, shownWidth: Int? = nil, quality: Int?, to dir: String,
                                    control: RunControl) throws {
        if let kind = Posix.kind(dir), kind != .directory {
            throw RunError("output '\(dir)': not a folder (--format web writes a folder)")
        }
        let bundle = try SceneBundle(clip: clip, source: source, picture: "picture.webp")
        let html = page(title: title, width: shownWidth ?? source.width, viewAttributes: "src=\"scene.json\"",
                        scripts: "<script type=\"module\" src=\"wobble-view.js\"></script>")
        let files: [(String, [UInt8])] = [("picture.webp", try picture(source, quality: quality, control: control)),
                                          ("scene.json", try bundle.json()), ("wobble-view.js", Array(player.utf8)),
                                          ("index.html", Array(html.utf8))]
        try control.check()
        if Posix.kind(dir) == nil {
            do { try Posix.mkdir(AT_FDCWD, dir, 0o777, shown: dir) } catch let e as PosixError {
                throw RunError("output '\(dir)': cannot make the folder: \(e)")
            }
        }
        guard Posix.kind(dir) == .directory else { throw RunError("output '\(dir)': not a folder (--format web writes a folder)") }
        // Names wobble-run chose, also in a folder the user named: a link
        // there is replaced by the file, never written through.
        for (name, bytes) in files { try AtomicFile.write(bytes, to: ScenePaths.join(dir, name), name: .madeUp) }
    }
}
