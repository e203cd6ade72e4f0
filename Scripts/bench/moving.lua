-- The moving-pixel benchmark scene (Scripts/bench-moving.sh): a 1280x720
-- image (--image) with four 300x220 regions, kicked in turn so that all
-- four keep wobbling for 3 s at 30 fps (90 frames). With the argument
-- "none", the same 90 frames with no region; with "distinct", the four
-- regions a third of a pixel off the whole-pixel grid, so that none is
-- another moved by whole pixels (each computes its own geometry).
fps(30)
local regions = arg[1] ~= "none"
local off = arg[1] == "distinct" and 0.3 or 0
if regions then
  addSketch{ x = 80 + off, y = 60, w = 300, h = 220 }
  addSketch{ x = 860, y = 80 + off, w = 300, h = 220 }
  addSketch{ x = 120 + 2 * off, y = 420, w = 300, h = 220 }
  addSketch{ x = 900, y = 440 + 2 * off, w = 300, h = 220 }
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
