#!/usr/bin/env python3
"""Command-line fuzzer for wobble-run (issue 9): random option lists with
hostile values, run against the built binary, classified.

Each case is one run of the tool with 0-8 random options (huge, negative,
NaN/inf, non-ASCII and malformed numbers, empty strings, odd paths,
patterns, repeated and unknown options, `--opt=value` forms, a missing
value at the end) on a few fixture scenes, images, bad files and
`--assemble` folders. Classes:

  crash    exit status >= 128 or killed by a signal (the fuzzer sends none
           except for a hang)
  hang     still running after --hang seconds (then killed)
  status   an exit status other than 0, 1, 2
  silent   exit 1 or 2 with nothing on stderr
  format   exit 1 or 2 with no stderr line of the form `wobble-run: ...`
           or `<scene>:<line>: ...` (the first such line is the error:
           a script's print() output, also on stderr, may come before it)
  leftover a `wobble-tmp` file or folder left in the work folder
  disagree a generated scene (15% of the cases: sketches at huge, NaN and
           infinite coordinates, impulses, touches, shakes, waits, each
           statement under pcall or not) whose `--check` and render end
           differently (status, or the first error line)

Exit status 0 when no case fell in any class. Safety: the tool runs in a
private work folder per worker; `-o` values and `--assemble` outputs stay
inside it (never a device, an absolute path or `..`), inputs may be read
from anywhere. Cases that could legitimately run long are bounded when
generated: a large valid `--width`/`--height`, the long scene or a FIFO
input adds `--check` / a short `--timeout`; `--watch` is never generated
(it runs until interrupted).

Usage: Scripts/fuzz-cli.py [--cases N] [--seed S] [--jobs J]
                           [--binary PATH] [--hang SECONDS] [--log FILE]
"""
import argparse
import os
import random
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib

# ---------------------------------------------------------------- fixtures

def png(w, h, seed=0):
    """A w×h RGBA PNG with a gradient (seed shifts it)."""
    rows = []
    for y in range(h):
        row = bytearray(b"\x00")
        for x in range(w):
            row += bytes(((x * 7 + seed) & 255, (y * 11) & 255, ((x + y) * 5) & 255, 255))
        rows.append(bytes(row))
    raw = b"".join(rows)
    def chunk(t, b):
        return struct.pack(">I", len(b)) + t + b + struct.pack(">I", zlib.crc32(t + b) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


SCENES = {
    "poke.lua": 'image("img.png")\naddSketch{x = 8, y = 6, w = 24, h = 18}\nprepare()\nimpulse(1, 1, 0)\nwait(0.1) wait(0.1) wait(0.1)\n',
    "still.lua": 'image("img.png")\n',
    "noimage.lua": 'wait(0.1)\n',
    "own.lua": 'image("img.png") output("own_%03d.png") addSketch{x=1,y=1,w=10,h=10} prepare() touch(5,5,9,9) wait(0.2)\n',
    "owngif.lua": 'image("img.png") output("own.gif") fps(12) wait(0.25)\n',
    "err.lua": 'image("img.png")\nimpulse(nil, 0, 0)\n',
    "syntax.lua": 'image("img.png"\n',
    "huge.lua": 'image("img.png") addSketch{x=-1e19,y=-1e19,w=2e19,h=2e19} prepare() impulse(nil,1,0) wait(0.2)\n',
    "edge.lua": 'image("img.png") addSketch{x=-1e6,y=-1e6,w=2e6,h=2e6} prepare() impulse(nil,1,1) wait(0.1)\n',
    "tall.lua": 'image("tall.png") wait(0.1)\n',
    "trace.lua": 'image("img.png") addSketch() prepare() enableMotion("trace.csv") wait(0.3)\n',
    "badtrace.lua": 'image("img.png") enableMotion("bad.csv") wait(0.1)\n',
    "args.lua": 'image("img.png") for i, a in ipairs(arg) do print(i, a) end wait(0.05)\n',
    "long.lua": 'image("img.png") wait(1e9)\n',
    "spin.lua": 'image("img.png") while true do end\n',
    "random.lua": 'image("img.png") addSketch{x=math.random(0,20),y=math.random(0,20),w=10,h=10} prepare() impulse(1,1,0) wait(0.1)\n',
    "empty.lua": '',
    "binary.lua": None,  # bytes, below
}

ASSEMBLE = {
    "asm_good": [(i, png(8, 6, i)) for i in range(3)],
    "asm_slice": [(i, png(8, 6, i)) for i in range(10, 13)],
    "asm_gap": [(0, png(8, 6)), (2, png(8, 6))],
    "asm_huge": [(9223372036854775807, png(8, 6))],
    "asm_max": [(2147483647, png(8, 6))],
    "asm_sizes": [(0, png(8, 6)), (1, png(6, 8))],
    "asm_bad": [(0, b"\x89PNG\r\n\x1a\nnot really")],
    "asm_empty": [],
}


def make_fixture(root):
    os.makedirs(os.path.join(root, "out"))
    for name, text in SCENES.items():
        with open(os.path.join(root, name), "wb") as f:
            f.write(text.encode() if text is not None else bytes(range(256)) * 4)
    files = {
        "img.png": png(40, 30), "tall.png": png(1, 64), "wide.png": png(64, 1), "one.png": png(1, 1),
        "empty.png": b"", "trunc.png": png(40, 30)[:60], "text.png": b"hello, not an image\n",
        "jpeg.png": b"\xff\xd8\xff\xe0garbage", "trace.csv": b"t,ax,ay\n0,2,0\n0.1,0,-3\n0.1,0.5,0.5\n",
        "bad.csv": b"t,ax,ay\n0,1\n",
    }
    for name, data in files.items():
        with open(os.path.join(root, name), "wb") as f:
            f.write(data)
    os.makedirs(os.path.join(root, "dir.png"))
    os.makedirs(os.path.join(root, "dir.lua"))
    os.mkfifo(os.path.join(root, "fifo.png"))
    os.mkfifo(os.path.join(root, "fifo.lua"))
    for d, frames in ASSEMBLE.items():
        os.makedirs(os.path.join(root, d))
        for index, data in frames:
            with open(os.path.join(root, d, "frame_%05d.png" % index), "wb") as f:
                f.write(data)

# -------------------------------------------------------------- generators

HOSTILE_NUMBERS = [
    "0", "-0", "-1", "1", "2", "3", "+5", " 5", "5 ", "0x10", "1e308", "-1e308", "1e309", "1e-308", "5e-324",
    "nan", "NaN", "-nan", "inf", "-inf", "infinity", "1/0", "0/0", "9223372036854775807", "9223372036854775808",
    "-9223372036854775808", "-9223372036854775809", "18446744073709551616", "99999999999999999999999",
    "2147483647", "2147483648", "4294967296", "16384", "16385", "65535", "65536", "1.5", "0.0001", "1e3",
    "1000", "1000.0001", "", "  ", "abc", "\u0661\u0662", "\u0663\u0660", "1_000", "1,5", "0b1", "--", "-",
    "\t", "1e", "e5", ".", "1.", ".5", "0.5e-3", "1e-300", "-1e-300", "0x1p3", "٣", "12abc", "1 2",
    "\u00a0" + "5", "5\n", "\x7f", "１２",
]


SANE_NUMBERS = ["1", "2", "3", "8", "10", "12", "24", "25", "30", "50", "60", "64", "100", "0.5", "0.25", "2.5",
                "120", "200", "256", "0", "9", "1000", "-1", "5"]
HOSTILITY = [0.5]   # per case: how often a number is hostile rather than ordinary


def number(rng):
    if rng.random() >= HOSTILITY[0]:
        return rng.choice(SANE_NUMBERS)
    r = rng.random()
    if r < 0.55:
        return rng.choice(HOSTILE_NUMBERS)
    if r < 0.75:
        return str(rng.choice([1, -1]) * rng.randint(0, 10 ** rng.randint(0, 25)))
    if r < 0.9:
        return repr(rng.choice([1, -1]) * rng.random() * 10.0 ** rng.randint(-320, 307))
    return str(rng.randint(1, 64))


def frames(rng):
    r = rng.random()
    if r < 0.3:
        return rng.choice(["0-9223372036854775807", "9223372036854775807-", "9223372036854775807", "5-3", "-",
                           "--", "", "0-", "-5", "1-2-3", "0-0", "8", "8-8", "9-", "2147483647-2147483648",
                           "18446744073709551616", "0 - 3", "٣-٤", "+1-+2", "1e3", "nan-inf"])
    a, b = number(rng), number(rng)
    return rng.choice([f"{a}-{b}", f"{a}-", f"{a}", f"-{b}"])


READ_PATHS = ["img.png", "tall.png", "wide.png", "one.png", "empty.png", "trunc.png", "text.png", "jpeg.png",
              "dir.png", "missing.png", "", ".", "/", "/dev/null", "/etc/passwd", "poke.lua", "img.png/",
              "x" * 300 + ".png", "-", "--", "-o", "a\nb.png", "caf\u00e9.png", "./img.png", "out",
              os.fsdecode(b"caf\xe9.png"), os.fsdecode(b"img\xff\xfe.png")]   # not UTF-8

OUTPUTS = ["out/x.gif", "out/frames/", "out/p_%04d.png", "out/p_%d.png", "out/p_%010d.png", "out/p_%011d.png",
           "out/p_%0123456789012345678901d.png", "out/p_%099999999999999999999999999999d.png", "out/p_%d_%d.png",
           "out/p_%s.png", "out/p_%%.png", "out/p_%", "out/%d/x.png", "out/x.png", "out/x.txt", "out/", "out",
           "out/missing/sub/x.gif", "out/X.GIF", "x.gif", "-", "", "out/.gif", "out/" + "y" * 250 + ".gif",
           "out/caf\u00e9.gif", "out/a b.gif", "out/x.mp4", "out/x.webm", "out/x.mov", "poke.lua", "img.png",
           "out/-", "out/x.gif/", "out/%%%d.png", os.fsdecode(b"out/o\xfe.gif"), os.fsdecode(b"out/\xff_%03d.png")]

ASSEMBLE_DIRS = list(ASSEMBLE) + ["missing_dir", "img.png", "", ".", "/", "out", "asm_good/"]

SCENE_ARGS = [s for s in SCENES] + ["missing.lua", "dir.lua", "-", "poke", "img.png", "a b.lua", ""]

UNKNOWN = ["--widht", "--fp", "--out", "-x", "--", "---", "-", "--=", "--fps=", "--check=1", "--overlay=yes",
           "-oo", "--json", "--quality", "--watch=1", "-O", "--BACKEND", "--frame", "--max-frame", "--\u00e9"]


def option(rng):
    """One option as a list of arguments."""
    k = rng.randrange(23)
    v = lambda x: [x]
    if k == 0: return ["-o" if rng.random() < 0.5 else "--output", rng.choice(OUTPUTS)]
    if k == 1: return ["--format", rng.choice(["gif", "png", "null", "mp4", "webm", "GIF", "Null", "", "jpg", "null "])]
    if k == 2: return ["--fps", number(rng)]
    if k == 3: return ["--width", number(rng)]
    if k == 4: return ["--height", number(rng)]
    if k == 5: return ["--image", rng.choice(READ_PATHS)]
    if k == 6: return ["--frames", frames(rng)]
    if k == 7: return ["--overlay"]
    if k == 8: return ["--backend", rng.choice(["cpu", "cpu", "gles", "CPU", "", "vulkan", "gles "])]
    if k == 9: return ["--check"]
    if k == 10: return ["--seed", number(rng)]
    if k == 11: return ["--timeout", number(rng)]
    if k == 12: return ["--max-frames", number(rng)]
    if k == 13: return ["--allow-io"]
    if k == 14: return ["--loop", number(rng)]
    if k == 15: return ["--assemble", rng.choice(ASSEMBLE_DIRS)]
    if k == 16: return [rng.choice(["-q", "--quiet"])]
    if k == 17: return [rng.choice(["-v", "--verbose"])]
    if k == 18: return [rng.choice(["-h", "--help", "--version"])] if rng.random() < 0.3 else ["--check"]
    if k == 19: return [rng.choice(UNKNOWN)]
    if k == 20:
        o = option(rng)
        return [o[0] + "=" + o[1]] if len(o) == 2 and o[0].startswith("--") else o
    if k == 21: return [rng.choice(SCENE_ARGS)]
    return ["--"] + [rng.choice(HOSTILE_NUMBERS + READ_PATHS) for _ in range(rng.randrange(4))]


LUA_NUMBERS = ["1e19", "-1e19", "2e19", "1e6", "-1e6", "1000000.5", "-1000000.5", "1e308", "-1e308", "1/0", "-1/0",
               "0/0", "math.huge", "-math.huge", "math.maxinteger", "math.mininteger", "2^63", "-2^63", "5e-324",
               "-0.0", "1e-300", "0", "1", "2", "-1"]


def lua_number(rng):
    if rng.random() < 0.4:
        return rng.choice(LUA_NUMBERS)
    return repr(round(rng.uniform(-50, 90), rng.randint(0, 3)))


def lua_point(rng):
    return "{%s, %s}" % (lua_number(rng), lua_number(rng))


def scene(rng):
    """A generated scene: sketches at hostile coordinates, impulses, touches,
    shakes and waits, each statement under pcall or not."""
    n = lua_number
    lines = ['image("img.png")']
    for _ in range(rng.randrange(1, 12)):
        k = rng.randrange(12)
        if k < 3:
            st = "addSketch{x = %s, y = %s, w = %s, h = %s}" % (n(rng), n(rng), n(rng), n(rng))
        elif k == 3:
            st = "addSketch{lt = %s, rt = %s, rb = %s, lb = %s%s}" % (
                lua_point(rng), lua_point(rng), lua_point(rng), lua_point(rng),
                (", center = " + lua_point(rng)) if rng.random() < 0.5 else "")
        elif k == 4:
            st = "local s = addSketch() s.%s = %s" % (rng.choice(["lt", "rt", "rb", "lb", "center"]), lua_point(rng))
        elif k == 5:
            st = "prepare()"
        elif k == 6:
            st = "impulse(nil, %s, %s%s)" % (n(rng), n(rng), (", " + n(rng)) if rng.random() < 0.3 else "")
        elif k == 7:
            st = "touch(%s, %s, %s, %s)" % (n(rng), n(rng), n(rng), n(rng))
        elif k == 8:
            st = "enableMotion() shake(%s, %s)" % (n(rng), n(rng))
        elif k == 9:
            st = "wait(%s)" % (rng.choice(["0.05", "0.1", "0"]) if rng.random() < 0.8 else n(rng))
        elif k == 10:
            st = rng.choice(["overlay(true)", "untilStill(0.2)", "fps(%s)" % n(rng), 'edges("clamp")', 'overlap("first")'])
        else:
            st = "local m = wobbleModels()[1] if m then print(m.amplitude, m.direction.x) end"
        lines.append(("pcall(function() %s end)" % st) if rng.random() < 0.7 else st)
    lines.append("prepare() impulse(nil, 1, 0) wait(0.1)" if rng.random() < 0.7 else "wait(0.05)")
    return "\n".join(lines) + "\n"


def generated_case(rng):
    """(args, scene): a generated scene, rendered and checked (the two must agree)."""
    args = ["gen.lua", "--backend", rng.choice(["cpu", "gles"]), "--timeout", "20",
            "-o", rng.choice(["out/g.gif", "out/g/", "out/g_%03d.png"])]
    if rng.random() < 0.3:
        args.append("--overlay")
    if rng.random() < 0.3:
        args += ["--width", rng.choice(["20", "7", "80", "1"])]
    return args, scene(rng)


def case(rng):
    if rng.random() < 0.15:
        return generated_case(rng)
    return plain_case(rng), None


def plain_case(rng):
    HOSTILITY[0] = rng.choice([0.05, 0.2, 0.5, 0.9])
    args = []
    if rng.random() < 0.85:
        args.append(rng.choice(SCENE_ARGS))
    for _ in range(rng.randrange(1 + (8 if HOSTILITY[0] > 0.3 else 5))):
        args += option(rng)
    if rng.random() < 0.08 and args:
        args.append(rng.choice(["-o", "--fps", "--frames", "--image", "--assemble", "--timeout"]))  # missing value
    return bound(args, rng)


def bound(args, rng):
    """Keeps legitimately long runs out (see the module doc): the bounding
    options go last among the options (before a `--`), so they win."""
    flat = " ".join(args)
    big = False
    for i, a in enumerate(args):
        if a == "--":
            break
        name, _, inline = a.partition("=")
        if name in ("--width", "--height"):
            val = (inline if "=" in a else (args[i + 1] if i + 1 < len(args) else "")).strip()
            if val.lstrip("+-").isdigit() and int(val) > 256:
                big = True
    extra = []
    slow = ("long.lua" in args or "mp4" in flat or "webm" in flat or "x.mov" in flat)
    if (big or slow) and rng.random() < 0.95:
        extra += ["--check"]
    if rng.random() < 0.01:
        extra += ["--image", "fifo.png"]
    if rng.random() < 0.005:
        args = ["fifo.lua"] + args
    if "fifo" in " ".join(args + extra) or "spin.lua" in args or "fifo.lua" in args or rng.random() < 0.01:
        extra += ["--timeout", rng.choice(["0.2", "0.5", "1"])]
    if "--" in args:
        i = args.index("--")
        return args[:i] + extra + args[i:]
    return args + extra

# ------------------------------------------------------------------ runner

def first_line(b):
    return b.split(b"\n", 1)[0].decode("utf-8", "replace")


def leftovers(root):
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            if "wobble-tmp" in n:
                out.append(os.path.relpath(os.path.join(dirpath, n), root))
    return out


SCENE_ERROR = None


def error_line(stderr):
    """The error line: the first stderr line in one of the two error
    formats. (A script's print() also goes to stderr, so it need not be the
    first line when the scene printed before failing.)"""
    import re
    global SCENE_ERROR
    if SCENE_ERROR is None:
        SCENE_ERROR = re.compile(r"^[^\n]*?:\d+: ")
    for raw in stderr.split(b"\n"):
        line = raw.decode("utf-8", "replace")
        if line.startswith("wobble-run: ") or SCENE_ERROR.match(line):
            return line
    return None


def classify(status, stderr, args):
    if status < 0 or status >= 128:
        return "crash"
    if status not in (0, 1, 2):
        return "status"
    if status in (1, 2):
        if not stderr.strip():
            return "silent"
        if error_line(stderr) is None:
            return "format"
    return None


def worker(wid, binary, root, cases, hang, results, lock, log):
    work = os.path.join(root, f"w{wid}")
    make_fixture(work)
    env = dict(os.environ, SWIFT_BACKTRACE="enable=no", LC_ALL="C.UTF-8")
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    for n, (seed, (args, text)) in cases:
        out = os.path.join(work, "out")
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out, exist_ok=True)
        start = time.monotonic()
        check = None
        if text is not None:
            with open(os.path.join(work, "gen.lua"), "w") as f:
                f.write(text)
            try:
                c = subprocess.run([binary, "gen.lua", "--check", "--timeout", "20"] + args[args.index("--backend"):args.index("--timeout")],
                                   cwd=work, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   env=env, timeout=hang)
                check = (c.returncode, c.stderr)
            except subprocess.TimeoutExpired:
                check = (None, "")
        p = subprocess.Popen([binary] + args, cwd=work, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, env=env, start_new_session=True)
        try:
            _, err = p.communicate(timeout=hang)
            kind = classify(p.returncode, err, args)
            status = p.returncode
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            _, err = p.communicate()
            kind, status = "hang", None
            # A killed run may leave temporaries: not the tool's fault.
            for f in leftovers(work):
                shutil.rmtree(os.path.join(work, f), ignore_errors=True) if os.path.isdir(os.path.join(work, f)) \
                    else os.unlink(os.path.join(work, f))
        took = time.monotonic() - start
        if kind is None and check is not None:
            kind = classify(check[0], check[1], args) if check[0] is not None else "hang"
            # --check agrees with the render: same status, same error line on failure.
            if kind is None and (check[0] != status or (status != 0 and error_line(check[1]) != error_line(err))):
                kind = "disagree"
                err = f"check: {check[0]} {error_line(check[1])!r}; render: {status} {error_line(err)!r}".encode()
        if kind is None:
            left = leftovers(work)
            if left:
                kind = "leftover"
                for f in left:
                    path = os.path.join(work, f)
                    shutil.rmtree(path, ignore_errors=True) if os.path.isdir(path) else os.unlink(path)
        with lock:
            results["cases"] += 1
            results["time"] += took
            results["exits"][status] = results["exits"].get(status, 0) + 1
            if kind:
                results[kind] = results.get(kind, 0) + 1
                line = f"{kind}: case {n} (seed {seed}) status {status}: wobble-run {shlex.join(args)}\n    {first_line(err)}\n"
                if text is not None:
                    line += "    scene: " + text.replace("\n", "\n    scene: ") + "\n"
                log.write(line)
                log.flush()
                if results.get("printed", 0) < 20:
                    results["printed"] = results.get("printed", 0) + 1
                    sys.stderr.write(line)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--binary", default=None)
    ap.add_argument("--hang", type=float, default=30.0, help="seconds before a case counts as a hang (default 30)")
    ap.add_argument("--log", default=None, help="append every flagged case here (default: a file in the temp folder)")
    ap.add_argument("--progress", type=float, default=60, help="print a progress line every N seconds (0: never)")
    a = ap.parse_args()
    binary = a.binary or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".build", "debug", "wobble-run")
    binary = os.path.abspath(binary)
    if not os.access(binary, os.X_OK):
        sys.exit(f"fuzz-cli: no executable at {binary} (swift build, or --binary)")
    root = tempfile.mkdtemp(prefix="wobble-fuzz-cli-")
    log_path = a.log or os.path.join(root, "flagged.txt")
    log = open(log_path, "a")
    # Case n is generated from its own seed (seed * 1000003 + n): flagged cases print theirs.
    all_cases = []
    for n in range(a.cases):
        rng = random.Random(a.seed * 1_000_003 + n)
        all_cases.append((n, (a.seed * 1_000_003 + n, case(rng))))
    results = {"cases": 0, "time": 0.0, "exits": {}}
    lock = threading.Lock()
    jobs = max(1, a.jobs)
    chunks = [all_cases[i::jobs] for i in range(jobs)]
    threads = [threading.Thread(target=worker, args=(i, binary, root, chunks[i], a.hang, results, lock, log))
               for i in range(jobs)]
    start = time.monotonic()
    for t in threads:
        t.start()
    last = start
    while any(t.is_alive() for t in threads):
        time.sleep(0.5)
        if a.progress and time.monotonic() - last >= a.progress:
            last = time.monotonic()
            with lock:
                done, flagged = results["cases"], sum(results.get(k, 0) for k in ("crash", "hang", "status", "silent", "format", "leftover", "disagree"))
            el = last - start
            print(f"fuzz-cli: {done}/{a.cases} cases, {el:.0f} s, {done / el:.1f} cases/s, {flagged} flagged", file=sys.stderr, flush=True)
    for t in threads:
        t.join()
    elapsed = time.monotonic() - start
    kinds = ["crash", "hang", "status", "silent", "format", "leftover", "disagree"]
    bad = sum(results.get(k, 0) for k in kinds)
    statuses = ", ".join(f"{k}: {v}" for k, v in sorted(results["exits"].items(), key=lambda kv: str(kv[0])))
    print(f"fuzz-cli: {results['cases']} cases in {elapsed:.1f} s ({results['cases'] / elapsed:.1f}/s, {jobs} jobs); "
          + ", ".join(f"{k} {results.get(k, 0)}" for k in kinds) + f"; exit statuses {{{statuses}}}")
    if bad:
        print(f"fuzz-cli: flagged cases in {log_path}")
    else:
        shutil.rmtree(root, ignore_errors=True)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
