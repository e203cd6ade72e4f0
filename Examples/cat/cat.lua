-- A jelly cat: poke her cheeks and forehead and watch them wobble.
--   wobble-run Examples/cat/cat.lua -o cat.gif
-- Coordinates are pixels of chelsea.png (451×300), origin top-left, y down.

image("chelsea.png")
fps(30)
output("cat.gif")

-- Three soft regions, each bounded by four quadratic Bezier curves through
-- the edge midpoints of its corners.
local leftCheek = addSketch{
  lt = {95, 160}, rt = {225, 172}, rb = {222, 278}, lb = {92, 286},
}
local rightCheek = addSketch{
  lt = {280, 185}, rt = {365, 170}, rb = {372, 272}, lb = {292, 282},
}
local forehead = addSketch{ x = 190, y = 10, w = 150, h = 100 }

wait(0.2)                       -- a still moment first
prepare()

touch(150, 225, 190, 215)       -- drag across the left cheek, to the right
wait(0.4)
touch(265, 60, 262, 30)         -- flick the forehead upwards
wait(0.3)
impulse(rightCheek, -1, 0.4)    -- and the right cheek, towards the nose
untilStill()                    -- until every region has come to rest: the GIF loops without a jump
