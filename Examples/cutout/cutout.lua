-- The cup on its saucer sways from its base, and the table stays put: a
-- cutout moves the object over a plate (the table, filled in behind it)
-- instead of bending everything inside the region.
--   wobble-run Examples/cutout/cutout.lua           (writes cutout.gif beside the script)
-- cutout = "auto" finds the object inside the region (GrabCut, once per
-- run); cutout = "cup-mask.png" would use a mask you painted (grey, the
-- photo's size: white object, black background). docs/API.md, "Cutouts".
-- Coordinates are pixels of coffee.png (600×400), origin top-left, y down.

image("../latte/coffee.png")   -- the photo of Examples/latte (CC0, see its LICENSE.md)
fps(30)
output("cutout.gif")

local cup = addSketch{ x = 75, y = 15, w = 410, h = 378, pin = "bottom", cutout = "auto",
                       motion = "spring", duration = 0.9, damping = 0.12, strength = 0.07 }

wait(0.2)                       -- a still moment first
prepare()
impulse(cup, 1, 0)              -- the table is bumped from the left
untilStill()                    -- to rest: the GIF loops without a jump
