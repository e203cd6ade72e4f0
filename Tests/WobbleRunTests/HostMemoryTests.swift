import Foundation
import XCTest

/// The host's memory is bounded like the Lua heap: a scene that kicks a
/// spring thousands of times records each kick once (it used to copy every
/// kick so far at every moment: 4000 kicks took 289 MB, 8000 a gigabyte).
final class HostMemoryTests: XCTestCase {
    func testThousandsOfKicksRunInLittleMemoryUnderAnAddressSpaceLimit() throws {
        let box = try Sandbox()
        try box.writeImage("small.png", Sandbox.pattern(width: 64, height: 48))
        try box.write("s.lua", """
        image("small.png") addSketch{x=10,y=10,w=40,h=30,motion="spring",damping=0} prepare()
        for r=1,6000 do impulse(nil,1,0) wait(0.0001) end
        """)
        // 400 MB of address space: the old timeline needed about 600 MB here.
        let r = try Tool.run(["-c", "ulimit -v 400000; exec \"$0\" s.lua --check --json", Tool.executable.path],
                             cwd: box.url, executable: "/bin/sh")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.hasPrefix("{\"frames\":18,"), r.stdout)
    }
}
