-- An espresso cup bumped on its saucer: it sways from its base instead of
-- bulging in the middle, and the spoon leaning on it sways from its bowl.
--   wobble-run Examples/sway/sway.lua              (writes sway.gif beside the script)
-- pin = "bottom" fixes the region's bottom side as a root: the content
-- moves most near the top (the peak lies 80% of the way up) and not at all
-- on the saucer (docs/API.md, "Pins").
-- Coordinates are pixels of coffee.png (600×400), origin top-left, y down.

image("../latte/coffee.png")   -- the photo of Examples/latte (CC0, see its LICENSE.md)
fps(30)
output("sway.gif")

local cup = addSketch{ lt = {160, -6}, rt = {428, -6}, rb = {420, 300}, lb = {168, 300}, pin = "bottom",
                       motion = "spring", duration = 0.9, damping = 0.12, strength = 0.06 }
local spoon = addSketch{ lt = {318, 50}, rt = {440, 50}, rb = {424, 330}, lb = {318, 330}, pin = "bottom",
                         motion = "spring", duration = 0.6, damping = 0.15, strength = 0.05 }

wait(0.2)                       -- a still moment first
prepare()
impulse(cup, 1, 0)              -- the table is bumped from the left
impulse(spoon, 1, 0, 0.6)
wait(0.45)
impulse(spoon, -1, 0, 0.8)      -- the spoon knocks against the rim
untilStill()                    -- to rest: the GIF loops without a jump
