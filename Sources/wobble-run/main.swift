import WobbleCommands
import WobbleSystem

// The command line is the WobbleCommands library (its one subcommand
// table); this is only the process's entry. The exact bytes of each
// argument are handed on (file names need not be UTF-8), and the usual
// stack whatever `ulimit -s` says (a tiny one crashed Lua and Mesa).
ThisProcess.exit(StackRoom.run { Commands.main(PathBytes.arguments()) })
