-- A die-cut sticker of Chelsea wobbling over transparency.
--   wobble-run Examples/sticker/sticker.lua                   (sticker.gif)
--   wobble-run Examples/sticker/sticker.lua -o sticker.webm   (VP9 keeps the alpha; needs ffmpeg)
-- sticker.png is 320×320 RGBA: a circle of radius 136 around (160, 160),
-- transparent outside. Transparent pixels stay transparent in the GIF.

image("sticker.png")
fps(25)
output("sticker.gif")

-- The nose first: where regions overlap, the first model wins, and touch()
-- hits the first region containing the start point.
local nose = addSketch{ x = 135, y = 215, w = 90, h = 65, duration = 0.6, decay = 0.6, strength = 0.15 }
-- The whole sticker: the region's boundary (through the edge midpoints of
-- the 320×320 square) lies outside the circle, so the sticker's rim moves
-- and the transparency around it wobbles with it.
local sticker = addSketch{ x = 0, y = 0, w = 320, h = 320, strength = 0.1, decay = 0.5 }

wait(0.2)
prepare()
impulse(sticker, 1, -0.6)          -- slapped from the bottom left
untilStill(6)
touch(180, 240, 178, 262)          -- then boop the nose, down
untilStill(4)
