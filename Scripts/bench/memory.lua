-- The memory benchmark scene (Scripts/bench-memory.sh): two regions kept
-- wobbling for arg[1] seconds (default 5) at 30 fps, rendered at 640x480.
image("../../Examples/latte/coffee.png")
fps(30)
addSketch{ x = 205, y = 95, w = 167, h = 98 }    -- the crema
addSketch{ x = 322, y = 232, w = 86, h = 96 }    -- the spoon's bowl
prepare()
local seconds = tonumber(arg[1]) or 5
local t = 0
while t < seconds do
  impulse(1, math.cos(t), math.sin(t))
  impulse(2, -math.sin(t), math.cos(t), 0.7)
  wait(1.1)
  t = t + 1.1
end
