// Every file of this test target sees the shared test support (the tool,
// temporary folders, test images, a virtual display).
@_exported import WobbleTestSupport
