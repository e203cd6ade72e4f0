/// The keys' help: every key and mouse action of the studio, one line
/// each, as the window's `F1` sheet and the browser page's show it (the
/// page gets it from the server, so the two never differ).
package struct KeyHelp: Codable, Equatable, Sendable {
    package var keys: String
    package var what: String

    package init(_ keys: String, _ what: String) {
        self.keys = keys
        self.what = what
    }
}

extension StudioKeyMap {
    /// Every key and mouse action, in the order the help shows them.
    package static let help: [KeyHelp] = [
        KeyHelp("Space", "play / pause"),
        KeyHelp("Left / Right", "one frame back / forward (pauses)"),
        KeyHelp("Home", "frame 0 (pauses)"),
        KeyHelp("click / drag timeline", "scrub"),
        KeyHelp("hover a tick", "what kick it is and its line (script ticks below, performed above, baked green)"),
        KeyHelp("click a tick", "select a scripted touch/impulse/shake or a baked poke; drag a baked one to move it"),
        KeyHelp("Delete / Backspace", "delete the selected tick, else the selected region (Ctrl+S takes its line and mask out), else forget the pokes"),
        KeyHelp("wheel", "zoom around the mouse"),
        KeyHelp("middle drag, Space+drag", "pan (a Space press used to pan does not play/pause)"),
        KeyHelp("F", "fit the picture into its area (enlarging it too)"),
        KeyHelp("H", "hide / show the handles"),
        KeyHelp("drag a handle", "move that corner or center (also beside the picture)"),
        KeyHelp("A", "add a 90x90 region (regionN) at the mouse"),
        KeyHelp("Ctrl+click, right click", "select a region for the inspector"),
        KeyHelp("Tab / Shift+Tab", "select the next / previous region"),
        KeyHelp("Up / Down", "the inspector's row"),
        KeyHelp("- / +", "change it one step (PageUp / PageDown: ten)"),
        KeyHelp("Enter", "rename the selected region (type, Enter keeps, Esc leaves)"),
        KeyHelp("C", "cut out the selected region: its object moves, the background stays (outline in magenta)"),
        KeyHelp("Shift+drag / Alt+drag", "mark object / background in the selected region's cutout"),
        KeyHelp("Shift+click the picture", "add a region fitted around the object there, with its cutout"),
        KeyHelp("O, then clicks", "magnetic outline: points along an object's edge; a click on the first point or O closes it"),
        KeyHelp("Ctrl+S", "save the edits (and cutout masks, as <scene>-masks/<name>.png) into the scene"),
        KeyHelp("Ctrl+Z", "undo, across saves"),
        KeyHelp("Ctrl+Shift+Z, Ctrl+Y", "redo"),
        KeyHelp("drag inside a region", "poke it (touch)"),
        KeyHelp("Shift+arrows", "shake (1.5 g)"),
        KeyHelp("R", "record a take from the clip's end; R again writes <scene>-take-N.lua"),
        KeyHelp("B", "bake the last take's pokes and shakes into the clip at their times"),
        KeyHelp("L", "loop on / off (the preview loops; Ctrl+S writes loop())"),
        KeyHelp("M", "mute / unmute the soundtrack (violet ticks: its beats, short ones its onsets)"),
        KeyHelp("E", "export: render the saved scene's output in the background"),
        KeyHelp("Shift+E", "export with a preset or as a web page: choose the row (Up/Down, Enter or its number; Esc cancels)"),
        KeyHelp("P", "write the frame shown as <scene>-still-N.png"),
        KeyHelp("F1 or ?", "this help"),
        KeyHelp("Esc", "quit (with unsaved edits it asks first)"),
    ]
}
