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

/// Our Swift targets build with no warning: a warning is an error (a root
/// package may use unsafe flags; the build stays warning-free for every
/// contributor, not only in CI).
let strict: [SwiftSetting] = [.unsafeFlags(["-warnings-as-errors"])]

let package = Package(
    name: "wobble-run",
    products: [
        .executable(name: "wobble-run", targets: ["wobble-run"]),
        .executable(name: "wobble-studio", targets: ["wobble-studio"]),
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
        // Colour: input images converted to sRGB through their ICC profile
        // (Little CMS), and zlib for PNG's compressed iCCP profile.
        systemLibrary("CLCMS2", pkgConfig: "lcms2", apt: "liblcms2-dev"),
        systemLibrary("CZlib", pkgConfig: "zlib", apt: "zlib1g-dev"),
        // The browser studio's HTTP + WebSocket server (civetweb; Debian
        // ships no pkg-config file for it).
        .systemLibrary(name: "CCivetweb", path: "Sources/CCivetweb", providers: [.apt(["libcivetweb-dev"])]),
        // The studio window only (the `wobble-studio` executable): SDL2. Its
        // headers are named by their folder (<SDL2/SDL.h>): sdl2.pc's cflags
        // carry -D_REENTRANT, which SwiftPM refuses with a warning.
        systemLibrary("CSDL2", pkgConfig: nil, apt: "libsdl2-dev"),

        // Hand-written C: Lua trampolines and macros as functions.
        .target(name: "CWobbleLuaShim", dependencies: ["CLua"]),
        // The CPU renderer's per-row kernel (the four texel loads, the
        // bilinear filter, the store) built for several CPU levels and
        // chosen at run time; exact against its Swift reference. Optimised
        // in debug builds too, as WobbleRender is (below).
        .target(name: "CWobbleKernel", cSettings: [.unsafeFlags(["-O2"], .when(configuration: .debug))]),
        // System calls Swift's Glibc lacks: renameat2, spawning a child that
        // dies with us, the async-signal-safe signal handler.
        .target(name: "CWobbleSys"),
        // OpenCV (imgproc's grabCut, photo's inpaint) behind a small C
        // interface, C++ inside; the only code that calls OpenCV. Only the
        // three libraries it uses are linked (opencv4's pkg-config names
        // every module, which would pull dozens of them into the binary).
        .target(
            name: "CWobbleVision",
            // -O2 in debug builds too (as CWobbleKernel): the plate's patch
            // fill and the matte are loops a debug build runs 5–10× slower.
            cxxSettings: [.unsafeFlags(["-I/usr/include/opencv4"]), .unsafeFlags(["-O2"], .when(configuration: .debug))],
            linkerSettings: [.linkedLibrary("opencv_photo"), .linkedLibrary("opencv_imgproc"), .linkedLibrary("opencv_core")]
        ),

        // The system layer under everything: checked POSIX calls, atomic
        // files and folder commits, the one child-process spawner, the one
        // signal handler, the one file watcher, byte-exact paths, the
        // monotonic clock.
        .target(name: "WobbleSystem", dependencies: ["CWobbleSys"], swiftSettings: strict),

        // Pure Swift: geometry, wobble math, models, clock, timeline.
        .target(name: "WobbleCore", swiftSettings: strict),
        // Pure Swift: sound analysis (our FFT, onsets, beats that follow
        // tempo changes, level) and synthetic test tracks.
        .target(name: "WobbleAudio", dependencies: ["WobbleSystem"], swiftSettings: strict),
        // The Lua host: VM, sandbox, API bindings.
        .target(name: "WobbleScript", dependencies: ["WobbleSystem", "WobbleCore", "WobbleAudio", "CLua", "CWobbleLuaShim"], swiftSettings: strict),
        // The GLSL ES sources: `Shaders/` stays the one top-level home of the
        // shaders (the renderer, the studio window and the browser page all
        // compile these files), embedded into the binary by SwiftPM.
        .target(name: "WobbleShaders", path: "Shaders",
                resources: ["common.glsl", "copy.frag", "downscale.frag", "present.frag", "quad.vert", "resolve.frag", "wobble.frag"]
                    .map { .embedInCode($0) },
                swiftSettings: strict),
        // Renderers: CPU reference and GLES through EGL.
        // Optimised in debug builds too: the CPU backend is the default
        // renderer where there is no GPU, and unoptimised SIMD code is some
        // 50 times slower (the end-to-end tests run the debug binary).
        .target(name: "WobbleRender", dependencies: ["WobbleSystem", "WobbleCore", "WobbleShaders", "CEGL", "CGLES", "CWobbleKernel"],
                swiftSettings: strict + [.unsafeFlags(["-O"], .when(configuration: .debug))]),
        // Cutouts: masks (GrabCut) and plates (inpainting) for regions whose
        // object moves over a still background; the only OpenCV user.
        // Optimised in debug builds too, as WobbleRender is: its per-pixel
        // loops (over-segmentation, grouping, matting) run some 30 times
        // slower unoptimised, and the in-process tests and studio use them.
        .target(name: "WobbleVision", dependencies: ["WobbleSystem", "WobbleCore", "CWobbleVision"],
                swiftSettings: strict + [.unsafeFlags(["-O"], .when(configuration: .debug))]),
        // Images in and out: PNG, JPEG, GIF, frame sinks; colour to sRGB.
        // Optimised in debug builds too: its per-pixel loops (PNG rows, the
        // GIF encoder, colour) are what the tests' frames go through.
        .target(name: "WobbleMedia", dependencies: ["WobbleSystem", "WobbleCore", "CPNG", "CTurboJPEG", "CGIF", "CImageQuant", "CWebP", "CLCMS2", "CZlib"],
                swiftSettings: strict + [.unsafeFlags(["-O"], .when(configuration: .debug))]),
        // The product as a library: the scene runner, the output table, the
        // presets and their search, the frame loop, --assemble, exports in
        // the background, takes, a live session (no window code, no
        // argument parsing): every front end calls it in-process.
        .target(name: "WobbleEngine", dependencies: ["WobbleSystem", "WobbleCore", "WobbleAudio", "WobbleScript", "WobbleRender", "WobbleMedia", "WobbleVision", "WobbleWeb"], swiftSettings: strict),
        // The web files (`Web/`: the browser studio's page and the web
        // player), embedded in the binary as SwiftPM resources; the one
        // Swift file there gives them by name (`WebAssets.all`).
        .target(name: "WobbleWeb", path: "Web",
                resources: ["app.js", "index.html", "render.js", "style.css", "wobble-motion.js", "wobble-view.js"].map { .embedInCode($0) },
                swiftSettings: strict),
        // The server of the browser studio (`wobble-run serve`): tokens,
        // the scene folder's files under the sandbox's rules, WebSockets.
        .target(name: "WobbleServe", dependencies: ["WobbleSystem", "WobbleCore", "WobbleScript", "WobbleRender", "WobbleEngine", "WobbleStudioCore", "WobbleWeb", "CCivetweb"], swiftSettings: strict),
        // The studio without a window: a live session's editing, pokes,
        // takes, timeline, cutouts and exports as commands in and Codable
        // snapshots out, for every front end: the only door the surfaces
        // use (no SDL, EGL, GL, renderer, media or vision import: media and
        // vision through the engine; StudioDoorTests checks).
        .target(name: "WobbleStudioCore", dependencies: ["WobbleSystem", "WobbleCore", "WobbleScript", "WobbleEngine"], swiftSettings: strict),
        // The studio's SDL2 window (`wobble-run edit`): a thin surface over
        // the studio core (layout, key map, GL presenting, SDL audio).
        .target(name: "WobbleStudio", dependencies: ["WobbleSystem", "WobbleCore", "WobbleScript", "WobbleEngine", "WobbleRender", "WobbleStudioCore", "CSDL2", "CEGL", "CGLES"], swiftSettings: strict),
        // The command line as a library: one subcommand table (render,
        // edit, new, cutout, serve, pack) that the dispatch, help, the man
        // page and the completions are made from, over the engine (it
        // imports no renderer, media or vision module: WobbleRunSourceTests);
        // links no window system: `wobble-run edit` runs the `wobble-studio`
        // executable when it is installed; `wobble-run serve` is the browser
        // studio (WobbleServe).
        .target(name: "WobbleCommands", dependencies: ["WobbleSystem", "WobbleCore", "WobbleScript", "WobbleEngine", "WobbleServe"], swiftSettings: strict),
        // The headless command-line tool: main.swift, a few lines.
        .executableTarget(
            name: "wobble-run",
            dependencies: ["WobbleCommands", "WobbleSystem"],
            swiftSettings: strict
        ),
        // The studio executable (`wobble-run edit` runs it): SDL2 + X11/Wayland.
        .executableTarget(name: "wobble-studio", dependencies: ["WobbleStudio", "WobbleSystem"], swiftSettings: strict),

        // Sound analysis benchmark and the drum synthesiser (Scripts/bench-sound.sh, Scripts/make-drums.sh).
        .executableTarget(name: "wobble-sound-bench", dependencies: ["WobbleAudio", "WobbleSystem"], swiftSettings: strict),

        // Renderer benchmark (Scripts/bench-render.sh).
        .executableTarget(name: "wobble-render-bench", dependencies: ["WobbleCore", "WobbleRender", "WobbleSystem"], swiftSettings: strict),

        // What the test targets share: running the tool, temporary folders,
        // test images, a virtual display (Xvfb).
        .target(name: "WobbleTestSupport", dependencies: ["WobbleSystem", "WobbleCore", "WobbleMedia"], path: "Tests/WobbleTestSupport", swiftSettings: strict),

        .testTarget(name: "WobbleSystemTests", dependencies: ["WobbleTestSupport", "WobbleSystem"], swiftSettings: strict),
        .testTarget(name: "WobbleCoreTests", dependencies: ["WobbleCore"], swiftSettings: strict),
        .testTarget(name: "WobbleAudioTests", dependencies: ["WobbleAudio", "WobbleSystem"], swiftSettings: strict),
        .testTarget(name: "WobbleScriptTests", dependencies: ["WobbleTestSupport", "WobbleSystem", "WobbleScript", "WobbleCore", "WobbleAudio"], swiftSettings: strict),
        .testTarget(name: "WobbleRenderTests", dependencies: ["WobbleSystem", "WobbleRender", "WobbleCore", "WobbleMedia", "CEGL", "CGLES"], swiftSettings: strict),
        .testTarget(name: "WobbleMediaTests", dependencies: ["WobbleTestSupport", "WobbleSystem", "WobbleMedia", "WobbleCore", "CGIF", "CImageQuant"], swiftSettings: strict),
        .testTarget(name: "WobbleEngineTests", dependencies: ["WobbleTestSupport", "WobbleSystem", "WobbleEngine", "WobbleCore", "WobbleScript", "WobbleAudio", "WobbleRender", "WobbleMedia"], swiftSettings: strict),
        .testTarget(name: "WobbleStudioTests", dependencies: ["WobbleTestSupport", "WobbleSystem", "wobble-run", "wobble-studio", "WobbleStudio", "WobbleStudioCore", "WobbleCore", "WobbleMedia", "WobbleAudio", "WobbleEngine", "WobbleRender", "WobbleScript"], swiftSettings: strict),
        .testTarget(name: "WobbleStudioCoreTests", dependencies: ["WobbleTestSupport", "WobbleSystem", "WobbleStudioCore", "WobbleCore", "WobbleEngine"], swiftSettings: strict),
        .testTarget(name: "WobbleServeTests", dependencies: ["WobbleTestSupport", "WobbleSystem", "WobbleServe", "WobbleStudioCore", "WobbleEngine", "WobbleCore", "WobbleMedia", "WobbleRender", "wobble-run"],
                    exclude: ["Browser/drive.py", "Browser/player.py", "Browser/decode-apng.py"], swiftSettings: strict),
        // SelectSet/: the selection benchmark's photos, read from the source tree.
        .testTarget(name: "WobbleVisionTests", dependencies: ["WobbleTestSupport", "WobbleVision", "WobbleCore", "WobbleMedia", "WobbleRender"],
                    exclude: ["SelectSet"], swiftSettings: strict),
        .testTarget(name: "WobbleCommandsTests", dependencies: ["WobbleTestSupport", "WobbleSystem", "WobbleCommands", "WobbleEngine", "WobbleCore"], swiftSettings: strict),
        .testTarget(name: "WobbleRunTests", dependencies: ["WobbleTestSupport", "WobbleSystem", "wobble-run", "wobble-studio", "WobbleCore", "WobbleMedia", "WobbleAudio", "CGIF"], swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)
