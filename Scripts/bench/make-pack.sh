# Sourced by Scripts/bench-pack.sh and Scripts/slurm-pack.sh (from the
# repository's root): make_pack DIR ROWS writes into DIR a scene
# (pack.lua: one region poked, a 2 s clip), ROWS photos (320x240 crops of
# the cat photo at different places, img_NNN.png, by ffmpeg in one call)
# and pack.csv with one row per photo (out/img_NNN.gif).
make_pack() {
  local dir=$1 rows=$2
  mkdir -p "$dir"
  ffmpeg -v error -y -loop 1 -i Examples/cat/chelsea.png \
    -vf "crop=320:240:'mod(n*7,131)':'mod(n*3,61)'" -frames:v "$rows" "$dir/img_%03d.png"
  # ffmpeg numbers from 1; the rows from 0.
  cat > "$dir/pack.lua" <<'LUA'
fps(30)
addSketch{ x = 90, y = 50, w = 150, h = 120 }
prepare()
impulse(1, 1, 0.3)
wait(2)
LUA
  {
    echo "scene,image,output"
    for ((i = 1; i <= rows; i++)); do printf 'pack.lua,img_%03d.png,out/img_%03d.gif\n' "$i" "$i"; done
  } > "$dir/pack.csv"
}
