-- The GIF benchmark scene (Scripts/bench-gif.sh): two wobbling regions for
-- 3 s at 30 fps (90 frames), rendered at 640x480 (--width 640 --height 480).
-- Coordinates are pixels of coffee.png (600x400).
image("../../Examples/latte/coffee.png")
fps(30)

addSketch{ x = 205, y = 95, w = 167, h = 98 }    -- the crema
addSketch{ x = 322, y = 232, w = 86, h = 96 }    -- the spoon's bowl
prepare()

impulse(1, 1, 0.3)        -- the crema swings right
wait(0.4)
impulse(2, -0.3, 1)       -- the spoon swings down
wait(1.3)
impulse(1, 0, -1, 0.8)    -- a second, smaller push on the crema
wait(1.3)                 -- 3 s in all
