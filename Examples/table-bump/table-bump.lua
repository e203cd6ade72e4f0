-- An espresso on a table that gets bumped: the wobble is driven by a
-- recorded accelerometer trace (a phone lying on the table beside the cup).
--   wobble-run Examples/table-bump/table-bump.lua
-- bump.csv: t (s since enableMotion), ax, ay (g, device axes: x right, y up),
-- 50 samples a second. A sample above 1 g starts a wobble in every region
-- whose amplitude is below 0.3, in direction (ax, -ay) on the image.

image("../latte/coffee.png")    -- the same photo as Examples/latte (CC0, see its LICENSE.md)
fps(30)
output("table-bump.gif")

-- Where regions overlap (the spoon and the crema lie on the saucer) their
-- moves add up, so the spoon handle bends smoothly across the saucer's
-- rim; overlap("first") would give the original's first-region-wins.
local crema  = addSketch{ lt = {205, 95}, rt = {372, 95}, rb = {372, 193}, lb = {205, 193},
                          duration = 0.8, strength = 0.1 }          -- sloshes fast
local spoon  = addSketch{ x = 322, y = 236, w = 88, h = 92, duration = 0.5, strength = 0.06 }
local saucer = addSketch{ lt = {78, 68}, rt = {480, 68}, rb = {480, 390}, lb = {78, 390},
                          strength = 0.035 }                         -- heavy, moves little

prepare()
enableMotion("bump.csv")
wait(4.5)          -- the trace plays on the virtual clock
untilStill()       -- to rest: the GIF loops without a jump
