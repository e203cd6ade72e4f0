-- A single jelly: the crema of an espresso, poked once.
--   wobble-run Examples/latte/latte.lua            (writes latte.gif beside the script)
-- Coordinates are pixels of coffee.png (600×400), origin top-left, y down.

image("coffee.png")
fps(30)
output("latte.gif")

-- The crema's oval: the boundary is four quadratic Bezier curves through
-- the midpoints of the edges, so a rectangle of corners gives a rounded
-- shape that touches the rectangle at the middle of each side.
-- strength: the peak move as a fraction of the shorter side; the original
-- used 0.08, which is subtle on a smooth surface like this one.
addSketch{ lt = {205, 95}, rt = {372, 95}, rb = {372, 193}, lb = {205, 193}, strength = 0.15 }

wait(0.3)                      -- a still moment first
prepare()                      -- the sketch becomes a live wobble model
touch(240, 150, 290, 140)      -- a drag to the right, starting on the crema
untilStill()                   -- 1.2 s cycles, ×0.7 each (the original's defaults), to rest: a seamless loop
