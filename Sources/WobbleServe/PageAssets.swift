import WobbleWeb

/// The browser studio's page files (`Web/`), embedded at build time
/// (`WebAssets`, SwiftPM resources).
enum PageAssets {
    /// Every file of `Web/` by its name there, with its text.
    static var all: [String: String] { WebAssets.all }
}
