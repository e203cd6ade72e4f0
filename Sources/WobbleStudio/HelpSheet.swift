import WobbleCore
import WobbleStudioCore
import WobbleRender

/// Every key and mouse action of the studio, shown over the window by
/// `F1` (or `?`), with the last message whole; pages when the window is too
/// small for it all (`Down` shows the next page, any other key closes it).
enum HelpSheet {
    static let entries: [(keys: String, what: String)] = [
        ("Space", "play / pause"),
        ("Left / Right", "one frame back / forward (pauses)"),
        ("Home", "frame 0 (pauses)"),
        ("click / drag timeline", "scrub"),
        ("hover a tick", "what kick it is and its line (script ticks below, performed above, baked green)"),
        ("click a tick", "select a scripted touch/impulse/shake or a baked poke; drag a baked one to move it"),
        ("Delete", "delete the selected tick, else the selected region (an added one), else forget the pokes"),
        ("wheel", "zoom around the mouse"),
        ("middle drag, Space+drag", "pan (a Space press used to pan does not play/pause)"),
        ("F", "fit the picture into the window (enlarging it too)"),
        ("H", "hide / show the handles"),
        ("drag a handle", "move that corner or center (also beside the picture)"),
        ("A", "add a 90x90 region (regionN) at the mouse"),
        ("Ctrl+click, right click", "select a region for the inspector"),
        ("Tab / Shift+Tab", "select the next / previous region"),
        ("Up / Down", "the inspector's row"),
        ("- / +", "change it one step (PageUp / PageDown: ten)"),
        ("Enter", "rename the selected region (type, Enter keeps, Esc leaves)"),
        ("C", "cut out the selected region: its object moves, the background stays (outline in magenta)"),
        ("Shift+drag / Alt+drag", "mark object / background in the selected region's cutout"),
        ("Shift+click the picture", "add a region fitted around the object there, with its cutout"),
        ("O, then clicks", "magnetic outline: points along an object's edge; a click on the first point or O closes it"),
        ("Ctrl+S", "save the edits (and cutout masks, as <scene>-masks/<name>.png) into the scene"),
        ("Ctrl+Z", "undo, across saves"),
        ("Ctrl+Shift+Z, Ctrl+Y", "redo"),
        ("drag inside a region", "poke it (touch)"),
        ("Shift+arrows", "shake (1.5 g)"),
        ("Backspace", "forget the pokes"),
        ("R", "record a take from the clip's end; R again writes <scene>-take-N.lua"),
        ("B", "bake the last take's pokes and shakes into the clip at their times"),
        ("L", "loop on / off (the preview loops; Ctrl+S writes loop())"),
        ("M", "mute / unmute the soundtrack (violet ticks: its beats, short ones its onsets)"),
        ("E", "export: render the saved scene's output in the background"),
        ("Shift+E", "export with a preset: choose the platform (Up/Down, Enter or its number; Esc cancels)"),
        ("P", "write the frame shown as <scene>-still-N.png"),
        ("F1 or ?", "this help"),
        ("Esc", "quit (with unsaved edits it asks first)"),
    ]

    /// The sheet's lines at `columns` characters (entries, then the last message).
    static func lines(columns: Int, message: String) -> [String] {
        let keyWidth = min(25, max(8, columns / 3))
        var out: [String] = []
        for e in entries {
            let key = e.keys.count < keyWidth ? e.keys + String(repeating: " ", count: keyWidth - e.keys.count) : e.keys + " "
            let rest = Chrome.wrap(e.what, width: max(8, columns - keyWidth - 1))
            if key.count > keyWidth {
                out.append(e.keys)
                out += rest.map { String(repeating: " ", count: keyWidth) + $0 }
            } else {
                out.append(key + (rest.first ?? ""))
                out += rest.dropFirst().map { String(repeating: " ", count: keyWidth) + $0 }
            }
        }
        if !message.isEmpty {
            out.append("")
            out.append("last message:")
            out += Chrome.wrap(message, width: max(8, columns))
        }
        return out
    }

    /// The page `page` of the sheet for a window `width` x `height`, and
    /// how many pages there are.
    static func image(width: Int, height: Int, page: Int, message: String) -> (image: RGBAImage, pages: Int) {
        var c = Canvas(width: max(1, width), height: max(1, height), color: (24, 26, 32))
        let pad = 10, row = StudioFont.cellHeight + 2
        let columns = max(8, Canvas.fits(from: pad, to: width - pad))
        let all = lines(columns: columns, message: message)
        let perPage = max(1, (height - pad * 2 - row * 2) / row)
        let pages = max(1, (all.count + perPage - 1) / perPage)
        let p = min(max(0, page), pages - 1)
        let title = pages > 1 ? "Keys, page \(p + 1)/\(pages): Down next page, any other key closes" : "Keys: any key closes"
        for (i, l) in Chrome.wrap(title, width: columns).prefix(1).enumerated() { c.text(l, x: pad, y: pad + i * row, (255, 220, 120)) }
        for (i, l) in all.dropFirst(p * perPage).prefix(perPage).enumerated() {
            c.text(l, x: pad, y: pad + (i + 2) * row, (225, 225, 230))
        }
        return (c.image, pages)
    }
}
