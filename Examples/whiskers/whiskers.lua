-- A choreography on Chelsea's face: ears, nose and cheeks touched on a beat,
-- then everything at once.
--   wobble-run Examples/whiskers/whiskers.lua                (beat 0.5 s)
--   wobble-run Examples/whiskers/whiskers.lua -- 0.35        (faster)
-- Coordinates are pixels of chelsea.png (451×300), origin top-left, y down.

image("../cat/chelsea.png")     -- the same photo as Examples/cat (CC0, see its LICENSE.md)
fps(30)
output("whiskers.gif")

local beat = tonumber(arg[1]) or 0.5     -- seconds between moves (script argument)

-- Ears flick: short cycles, strong. Cheeks sway: slow, soft.
-- (duration = cycle length in s, strength = peak move as a fraction of the
-- shorter side, decay = amplitude kept per cycle; see docs/API.md)
local leftEar   = addSketch{ x = 35,  y = 0,   w = 80,  h = 70,  duration = 0.5, strength = 0.15, decay = 0.6 }
local rightEar  = addSketch{ x = 318, y = 0,   w = 85,  h = 70,  duration = 0.5, strength = 0.15, decay = 0.6 }
local nose      = addSketch{ x = 205, y = 195, w = 110, h = 95,  duration = 0.8, strength = 0.12 }
local leftCheek = addSketch{ lt = {40, 150}, rt = {200, 160}, rb = {205, 285}, lb = {45, 290},
                             duration = 1.4, strength = 0.1 }
local rightCheek = addSketch{ lt = {300, 160}, rt = {380, 150}, rb = {385, 275}, lb = {305, 285},
                              duration = 1.4, strength = 0.1 }

wait(beat)
prepare()

-- one, two: the ears, outwards
impulse(leftEar, -1, -0.3)
wait(beat)
impulse(rightEar, 1, -0.3)
wait(beat)
-- three: boop the nose (a drag down from the nose tip)
touch(262, 240, 262, 262)
wait(beat)
-- four, five: the cheeks, towards each other
touch(120, 220, 150, 220)
wait(beat)
touch(340, 215, 315, 215)
wait(beat)
-- and once more, faster
for i = 1, 2 do
  impulse(1, -1, 0)
  impulse(2, 1, 0)
  wait(beat / 2)
end
-- everything at once, upwards
impulse(nil, 0, -1, 0.8)
untilStill()       -- to rest: the GIF loops without a jump
