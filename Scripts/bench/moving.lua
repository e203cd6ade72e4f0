-- The moving-pixel benchmark scene (Scripts/bench-moving.sh): a 1280x720
-- image (--image) with four 300x220 regions, kicked in turn so that all
-- four keep wobbling for 3 s at 30 fps (90 frames). With the argument
-- "none", the same 90 frames with no region.
fps(30)
local regions = arg[1] ~= "none"
if regions then
  addSketch{ x = 80, y = 60, w = 300, h = 220 }
  addSketch{ x = 860, y = 80, w = 300, h = 220 }
  addSketch{ x = 120, y = 420, w = 300, h = 220 }
  addSketch{ x = 900, y = 440, w = 300, h = 220 }
end
prepare()
local t = 0
while t < 3 - 1e-9 do
  if regions then
    for i = 1, 4 do impulse(i, math.cos(t + i), math.sin(t + i)) end
  end
  wait(0.5)
  t = t + 0.5
end
