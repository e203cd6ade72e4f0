-- Springs on nested regions: Chelsea's whole face and, inside it, her nose.
-- Every poke adds to the swing already going (a damped spring per region),
-- so a nose booped again in step with its swing swings further instead of
-- restarting, and the face and nose offsets add up where they overlap: no
-- crease at the nose's rim. The face region reaches past the top and bottom of the photo;
-- what it pulls in from outside is the photo mirrored at its border.
--   wobble-run Examples/springs/springs.lua
-- Coordinates are pixels of chelsea.png (451×300), origin top-left, y down.

image("../cat/chelsea.png")     -- the same photo as Examples/cat (CC0, see its LICENSE.md)
fps(30)
output("springs.gif")

-- (the defaults, spelled out: regions add up, samples outside mirror)
overlap("sum")
edges("mirror")

-- The face: heavy and slow (period 1.4 s, little damping).
local face = addSketch{ lt = {20, -40}, rt = {415, -40}, rb = {405, 330}, lb = {10, 330}, center = {225, 150},
                        motion = "spring", duration = 1.4, damping = 0.18, strength = 0.05 }
-- The nose: light and quick.
local nose = addSketch{ x = 212, y = 196, w = 100, h = 86, center = {262, 240},
                        motion = "spring", duration = 0.5, damping = 0.15, strength = 0.14 }

wait(0.3)
prepare()

impulse(face, 1, -0.2)            -- the whole face pushed to the right
wait(0.5)
touch(262, 232, 262, 252)         -- boop the nose, down
wait(0.5)
touch(262, 232, 262, 252)         -- and again one swing later, in step: it swings 1.4× as far
wait(0.35)
impulse(face, -1, 0.3, 0.8)       -- the face back to the left, mid-swing
wait(0.4)
touch(240, 240, 215, 240)         -- the nose sideways
untilStill()                      -- the closed-form rest time of the slowest spring
