// The web files of this folder, embedded in the binary at build time
// (SwiftPM resources, `.embedInCode` in Package.swift): `wobble-run serve`
// and the web page writer never look for files at run time, and the pages
// fetch nothing from the network. A file added here is listed in
// Package.swift too (WobbleServeTests.PageAssetsTests checks).

/// The web files (`Web/`) by name, with their text.
public enum WebAssets {
    public static let all: [String: String] = [
        "app.js": text(PackageResources.app_js),
        "index.html": text(PackageResources.index_html),
        "render.js": text(PackageResources.render_js),
        "style.css": text(PackageResources.style_css),
        "wobble-motion.js": text(PackageResources.wobble_motion_js),
        "wobble-view.js": text(PackageResources.wobble_view_js),
    ]

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
}
