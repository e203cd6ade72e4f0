-- The whole-clip benchmark scene (Scripts/bench-clip.sh): a 1280x720 image
-- (--image) with four regions of a tenth of the picture each, kicked in
-- turn so that all four keep wobbling for 3 s at 30 fps (90 frames). With
-- the argument "none", the same 90 frames with no region.
fps(30)
local regions = arg[1] ~= "none"
if regions then
  addSketch{ x = 64, y = 48, w = 384, h = 240 }
  addSketch{ x = 768, y = 72, w = 384, h = 240 }
  addSketch{ x = 96, y = 408, w = 384, h = 240 }
  addSketch{ x = 800, y = 432, w = 384, h = 240 }
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
