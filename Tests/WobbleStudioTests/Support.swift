// Every file of this test target sees the shared test support (the tool,
// temporary folders, test images, a virtual display).
@_exported import WobbleTestSupport

@testable import WobbleStudio
@testable import WobbleStudioCore
import WobbleEngine

extension StudioApp {
    /// The live session behind the window's core: the tests look inside
    /// (the window itself reads only the core's snapshot and run).
    var session: LiveSession { core.session }
}
