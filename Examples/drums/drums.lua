-- The cat's cheeks bounce to a drum loop, and her forehead to its hats:
-- every time comes from the sound (beats and onsets), none is typed.
--   wobble-run Examples/drums/drums.lua        (writes drums.mp4 beside the script, with the sound)
-- drums.flac was synthesised by Scripts/make-drums.sh (kick, snare and hats
-- from noise and sines at 120 BPM): its licence is the project's.
-- Coordinates are pixels of chelsea.png (451×300), origin top-left, y down.

image("../cat/chelsea.png")     -- the photo of Examples/cat (CC0, see its LICENSE.md)
fps(30)
output("drums.mp4")

local drums = sound("drums.flac")
soundtrack(drums)               -- the video carries the loop, in sync

local leftCheek = addSketch{
  lt = {95, 160}, rt = {225, 172}, rb = {222, 278}, lb = {92, 286},
}
local rightCheek = addSketch{
  lt = {280, 185}, rt = {365, 170}, rb = {372, 272}, lb = {292, 282},
}
local forehead = addSketch{ x = 190, y = 10, w = 150, h = 100 }
prepare()

-- Every onset: on a beat (kick or snare) both cheeks bounce, as hard as the
-- hit is loud (level() of the next 0.1 s); between beats (a hat) the
-- forehead twitches.
local beats = drums:beats()
local b = 1
for _, t in ipairs(drums:onsets()) do
  wait(math.max(0, t - time()))
  while beats[b] and beats[b] < t - 0.05 do b = b + 1 end
  local strength = 0.5 + 2 * drums:level(t, t + 0.1)
  if beats[b] and math.abs(beats[b] - t) <= 0.05 then
    impulse(leftCheek, 0, 1, strength)
    impulse(rightCheek, 0, 1, strength)
  else
    impulse(forehead, 0, -1, 0.5 * strength)
  end
end
wait(drums.duration - time())   -- to the end of the loop
untilStill()                    -- and until every region rests (silence after the loop)
