-- A purring cat that never stops: a seamless loop that keeps moving.
--   wobble-run Examples/purr/purr.lua              (writes purr.gif beside the script)
-- loop() makes the clip one period of its own steady state: every kick of
-- these 2 seconds also acted 2, 4, 6 ... seconds earlier, so the frames show
-- a cat that has been purring forever, and the GIF's last frame flows into
-- its first while everything still moves (no untilStill(), no jump).
-- Coordinates are pixels of chelsea.png (451×300), origin top-left, y down.

image("../cat/chelsea.png")     -- the photo of Examples/cat (CC0, see its LICENSE.md)
fps(30)
output("purr.gif")
loop()                          -- before the first frame; the clip is one period

-- The face breathes slowly; the nose twitches; the right ear sways from
-- its root (pin = "bottom": the tip moves most, the root stays put).
local face = addSketch{ x = 60, y = 30, w = 330, h = 270, motion = "spring", duration = 1.0, damping = 0.15,
                        strength = 0.025 }
local nose = addSketch{ x = 222, y = 205, w = 80, h = 60, motion = "spring", duration = 0.5, damping = 0.2,
                        strength = 0.1 }
local ear = addSketch{ lt = {318, -14}, rt = {410, -14}, rb = {392, 74}, lb = {310, 74}, motion = "spring",
                       duration = 0.8, damping = 0.12, strength = 0.1, pin = "bottom" }
prepare()                       -- at time 0: a loop plays its models for the whole clip

impulse(face, 0, 1, 0.8)        -- breathe in
impulse(ear, 1, 0)
wait(0.5)
impulse(nose, 0, -1)            -- twitch
wait(0.5)
impulse(face, 0, -1, 0.8)       -- breathe out
impulse(ear, -1, 0, 0.7)
wait(0.5)
impulse(nose, 0, -1, 0.8)
wait(0.5)                       -- 2 s: the period (60 frames at 30 fps)
