// swift-tools-version: 6.0
// wobble-run: turn a still image into a jelly animation (see README.md).
import PackageDescription

/// A system library reached through pkg-config, with a Debian package hint.
func systemLibrary(_ name: String, pkgConfig: String?, apt: String) -> Target {
    .systemLibrary(
        name: name,
        path: "Sources/\(name)",
        pkgConfig: pkgConfig,
        providers: [.apt([apt])]
    )
}

let package = Package(
    name: "wobble-run",
    products: [
        .executable(name: "wobble-run", targets: ["wobble-run"]),
    ],
    targets: [
        // C libraries from Debian (Scripts/install-deps.sh installs them).
        systemLibrary("CLua", pkgConfig: "lua5.4", apt: "liblua5.4-dev"),
        systemLibrary("CEGL", pkgConfig: "egl", apt: "libegl-dev"),
        systemLibrary("CGLES", pkgConfig: "glesv2", apt: "libgles-dev"),
        systemLibrary("CPNG", pkgConfig: "libpng", apt: "libpng-dev"),
        systemLibrary("CTurboJPEG", pkgConfig: "libturbojpeg", apt: "libturbojpeg0-dev"),
        systemLibrary("CGIF", pkgConfig: nil, apt: "libgif-dev"),
        systemLibrary("CImageQuant", pkgConfig: "imagequant", apt: "libimagequant-dev"),
        // Animated WebP out (WebPAnimEncoder; libwebpmux pulls in libwebp).
        systemLibrary("CWebP", pkgConfig: "libwebpmux", apt: "libwebp-dev"),
        // The studio window only (`wobble-run edit`): SDL2, initialised by `edit` alone.
        systemLibrary("CSDL2", pkgConfig: "sdl2", apt: "libsdl2-dev"),

        // The only hand-written C: Lua trampolines and macros as functions.
        .target(name: "CWobbleLuaShim", dependencies: ["CLua"]),
        // System calls Swift's Glibc lacks: renameat2, spawning a child that dies with us.
        .target(name: "CWobbleSys"),

        // Pure Swift: geometry, wobble math, models, clock, timeline.
        .target(name: "WobbleCore"),
        // The Lua host: VM, sandbox, API bindings.
        .target(name: "WobbleScript", dependencies: ["WobbleCore", "CLua", "CWobbleLuaShim"]),
        // Renderers: CPU reference and GLES through EGL.
        .target(name: "WobbleRender", dependencies: ["WobbleCore", "CEGL", "CGLES"]),
        // Images in and out: PNG, JPEG, GIF, frame sinks.
        .target(name: "WobbleMedia", dependencies: ["WobbleCore", "CPNG", "CTurboJPEG", "CGIF", "CImageQuant", "CWebP", "CWobbleSys"]),
        // A live session: the scene re-run with performed events, its
        // inputs watched, frames rendered and composited (no window code).
        .target(name: "WobbleSession", dependencies: ["WobbleCore", "WobbleScript", "WobbleRender", "WobbleMedia"]),
        // The studio (`wobble-run edit`): an SDL2 window over a live session.
        .target(name: "WobbleStudio", dependencies: ["WobbleSession", "WobbleCore", "WobbleRender", "WobbleMedia", "CSDL2", "CEGL", "CGLES"]),
        // The command-line tool.
        .executableTarget(
            name: "wobble-run",
            dependencies: ["WobbleCore", "WobbleScript", "WobbleRender", "WobbleMedia", "WobbleSession", "WobbleStudio"]
        ),

        // Renderer benchmark (Scripts/bench-render.sh).
        .executableTarget(name: "wobble-render-bench", dependencies: ["WobbleCore", "WobbleRender"]),

        .testTarget(name: "WobbleCoreTests", dependencies: ["WobbleCore"]),
        .testTarget(name: "WobbleScriptTests", dependencies: ["WobbleScript", "WobbleCore"]),
        .testTarget(name: "WobbleRenderTests", dependencies: ["WobbleRender", "WobbleCore", "WobbleMedia", "CEGL", "CGLES"]),
        .testTarget(name: "WobbleMediaTests", dependencies: ["WobbleMedia", "WobbleCore", "CGIF"]),
        .testTarget(name: "WobbleSessionTests", dependencies: ["WobbleSession", "WobbleCore", "WobbleScript"]),
        .testTarget(name: "WobbleStudioTests", dependencies: ["wobble-run", "WobbleStudio", "WobbleCore", "WobbleMedia"]),
        .testTarget(name: "WobbleRunTests", dependencies: ["wobble-run", "WobbleCore", "WobbleMedia", "CGIF"]),
    ],
    swiftLanguageModes: [.v6]
)
