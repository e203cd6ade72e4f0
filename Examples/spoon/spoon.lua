-- A café table bumped: the spoon and the cup's handle jiggle, the cup stays put.
--   wobble-run Examples/spoon/spoon.lua          (writes spoon.gif beside the script)
-- The two regions were placed by dragging their handles in the studio
-- (wobble-run edit Examples/spoon/spoon.lua; README, Studio) and saved with
-- Ctrl+S. Coordinates are pixels of coffee.png (600×400), origin top-left, y down.

image("../latte/coffee.png")   -- the photo of Examples/latte (CC0, see its LICENSE.md)
fps(30)
output("spoon.gif")

-- duration: cycle length in s; strength: peak move as a fraction of the
-- shorter side (docs/API.md). The spoon is light and quick, the handle stiffer.
local spoon  = addSketch{ lt = {318, 222}, rt = {414, 226}, rb = {412, 334}, lb = {316, 330}, duration = 0.6, strength = 0.14 }
local handle = addSketch{ lt = {188, 222}, rt = {266, 226}, rb = {264, 312}, lb = {186, 310}, duration = 0.9, strength = 0.1 }

wait(0.3)                       -- a still moment first
prepare()
impulse(spoon, 1, 0.3)          -- the table bumped from the left
wait(0.15)
impulse(handle, 1, 0.2)         -- the handle a moment later
untilStill()                    -- to rest: the GIF loops without a jump
