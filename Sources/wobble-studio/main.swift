import WobbleStudio
import WobbleSystem
import Foundation

// The studio executable. `wobble-run edit ARGS...` runs it with the same
// arguments (found beside wobble-run, else on PATH), as git runs its
// subcommands; the headless tool thereby links no window system.

// The exact bytes of each argument (file names need not be UTF-8).
let arguments = PathBytes.arguments()
// No file the studio opens may become a closed stdin/stdout/stderr.
Posix.protectStandardDescriptors()
// What a scene prints cannot leave our messages mid-line.
Messages.trackStandardStreams()
// Every write is checked: a reader that went away is an error, not SIGPIPE.
Signals.ignoreBrokenPipe()
// The usual stack whatever `ulimit -s` says (a tiny one crashed Lua and Mesa).
ThisProcess.exit(StackRoom.run { Studio.main(arguments) })
