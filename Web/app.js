// The browser studio: a thin surface over the session the server owns.
// The server sends the scene (frame states, sketches, ticks) and the data
// the shaders need; the page plays the clip at its own frame rate, draws
// handles, and sends pokes, shakes, handle drags and saves back.
import { Renderer, loadShaders } from "./render.js";

const $ = (id) => document.getElementById(id);
const preview = $("preview"), handles = $("handles"), timeline = $("timeline");
const HANDLE_RADIUS = 10; // screen pixels within which a press takes a handle

// What the tests and Scripts/bench-browser.sh read.
const metrics = window.wobble = {
  ready: false, generation: -1, frame: 0, drawn: 0, draws: 0,
  pokeLatency: [], dragLatency: [], saved: [], errors: [], forceDraw: false,
};

let renderer = null;
let scene = null;            // the last scene message, with its frames
let states = null;           // the states message that came before it
let frame = 0, playing = true, clockTime = 0, lastTick = null;
let showHandles = true, dirty = true;
let seq = 0;
let pendingPoke = null;      // { seq, t0, frame, before } until its scene arrives
const pendingDrags = new Map(); // seq -> t0
let awaitingDraw = [];       // latencies to settle at the next exact draw
let drag = null;             // { sketch, point, points } while a handle moves
let pokeStart = null;

function message(text, cls = "") {
  const m = $("messages");
  m.textContent = text;
  m.className = cls;
}

function connect() {
  const token = new URLSearchParams(location.search).get("token");
  const url = `ws://${location.host}/ws` + (token ? `?token=${encodeURIComponent(token)}` : "");
  const ws = new WebSocket(url);
  ws.binaryType = "arraybuffer";
  ws.onmessage = (e) => (typeof e.data === "string" ? onText(JSON.parse(e.data)) : onBinary(e.data));
  ws.onclose = () => { message("disconnected from wobble-run serve (reload the page when it runs again)", "error"); metrics.closed = true; };
  return ws;
}

function send(obj) {
  if (socket.readyState !== WebSocket.OPEN) return 0;
  obj.seq = ++seq;
  socket.send(JSON.stringify(obj));
  return seq;
}

function onBinary(buffer) {
  const dv = new DataView(buffer);
  const n = dv.getUint32(0, true);
  const head = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 4, n)));
  const start = 4 + n;
  if (head.type === "image") {
    renderer.setImage(head.width, head.height, new Uint8Array(buffer, start, head.width * head.height * 4));
    handles.width = head.width;
    handles.height = head.height;
  } else if (head.type === "states") {
    states = { generation: head.generation, frames: decodeStates(new Float64Array(buffer.slice(start))) };
    return;
  } else if (head.type === "field") {
    const n = head.width * head.height;
    renderer.addField(head.id, head.k, head.x0, head.y0, head.width, head.height,
                      buffer.byteLength >= start + 4 * n && n > 0 ? new Float32Array(buffer, start, n) : null);
    // Drawn again only when the frame shown uses that shape.
    if (!scene || !(scene.frames[frame] || []).some((r) => r[0] === head.id)) return;
  }
  dirty = true;
}

// The states message: frameCount, then per frame the number of regions,
// then per region its entry's length and the entry.
function decodeStates(v) {
  const frames = [];
  let i = 1;
  for (let k = 0; k < v[0]; k++) {
    const n = v[i++], regions = [];
    for (let j = 0; j < n; j++) {
      const len = v[i++];
      regions.push(Array.from(v.subarray(i, i + len)));
      i += len;
    }
    frames.push(regions);
  }
  return frames;
}

function onText(m) {
  if (m.type === "scene") onScene(m);
  else if (m.type === "saved") {
    metrics.saved.push(m);
    message(m.message, m.ok ? "ok" : "error");
  } else if (m.type === "error") {
    metrics.errors.push(m.message);
    message(m.message, "error");
  }
}

function regionsDiffer(a, b) {
  return JSON.stringify(a || []) !== JSON.stringify(b || []);
}

function onScene(m) {
  const old = scene;
  m.frames = states && states.generation === m.generation ? states.frames : (old ? old.frames : []);
  scene = m;
  const used = new Set();
  for (const f of m.frames) for (const r of f) used.add(r[0]);
  renderer.keepShapes(used);
  metrics.generation = m.generation;
  metrics.frameCount = m.frameCount;
  $("scene").textContent = m.scene;
  $("unsaved").hidden = !m.unsaved;
  if (m.error) message(m.error, "error");
  else if (m.warnings.length) message(m.warnings.join("\n"), "warning");
  else if (m.notes.length) message(m.notes.join("\n"));
  if (pendingPoke && m.answers >= pendingPoke.seq) {
    // The region moves from the frame after the poke: show that frame now.
    const p = pendingPoke;
    pendingPoke = null;
    let k = p.frame;
    while (k < m.frameCount - 1 && !regionsDiffer(m.frames[k], p.before[k])) k++;
    frame = k;
    clockTime = frame / m.fps;
    playing = true;
    awaitingDraw.push({ list: metrics.pokeLatency, t0: p.t0 });
  }
  for (const [s, t0] of pendingDrags) {
    if (m.answers >= s) { awaitingDraw.push({ list: metrics.dragLatency, t0 }); pendingDrags.delete(s); }
  }
  if (!drag) drawHandlesLater();
  if (frame >= m.frameCount) { frame = 0; clockTime = 0; }
  metrics.ready = true;
  dirty = true;
  if (!old) requestAnimationFrame(tick);
}

// The sketch points with the center filled in (the mean of the corners).
function pointsOf(s) {
  const p = s.points;
  const c = p.center || [(p.lt[0] + p.rt[0] + p.rb[0] + p.lb[0]) / 4, (p.lt[1] + p.rt[1] + p.rb[1] + p.lb[1]) / 4];
  return { lt: p.lt, rt: p.rt, rb: p.rb, lb: p.lb, center: c };
}

function drawHandlesLater() { handlesDirty = true; }
let handlesDirty = true;

function drawHandles() {
  handlesDirty = false;
  const ctx = handles.getContext("2d");
  ctx.clearRect(0, 0, handles.width, handles.height);
  if (!showHandles || !scene) return;
  const scale = handles.width / handles.getBoundingClientRect().width || 1;
  for (const s of scene.sketches) {
    const p = drag && drag.sketch === s ? drag.points : pointsOf(s);
    const mid = (a, b) => [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2];
    const mL = mid(p.lt, p.lb), mT = mid(p.lt, p.rt), mR = mid(p.rt, p.rb), mB = mid(p.rb, p.lb);
    ctx.lineWidth = 2 * scale;
    ctx.strokeStyle = s.editable ? "rgba(138,180,248,0.95)" : "rgba(154,160,166,0.9)";
    ctx.beginPath();
    ctx.moveTo(...mL);
    ctx.quadraticCurveTo(...p.lt, ...mT);
    ctx.quadraticCurveTo(...p.rt, ...mR);
    ctx.quadraticCurveTo(...p.rb, ...mB);
    ctx.quadraticCurveTo(...p.lb, ...mL);
    ctx.stroke();
    for (const key of ["lt", "rt", "rb", "lb", "center"]) {
      ctx.beginPath();
      ctx.arc(p[key][0], p[key][1], (key === "center" ? 5 : 4) * scale, 0, 2 * Math.PI);
      ctx.fillStyle = s.editable ? (key === "center" ? "#fbbc04" : "#8ab4f8") : "#9aa0a6";
      ctx.fill();
    }
    if (s.name) {
      ctx.font = `${12 * scale}px system-ui`;
      ctx.fillStyle = "#fff";
      ctx.fillText(s.name, p.lt[0], p.lt[1] - 6 * scale);
    }
  }
}

function tick(now) {
  if (lastTick !== null && playing && scene) {
    clockTime += (now - lastTick) / 1000;
    const k = Math.floor(clockTime * scene.fps + 1e-9);
    if (k !== frame) {
      frame = scene.frameCount ? k % scene.frameCount : 0;
      if (k >= scene.frameCount) clockTime = frame / scene.fps;
      dirty = true;
    }
  }
  lastTick = now;
  if (scene && (dirty || metrics.forceDraw)) {
    const exact = renderer.draw(scene.frames[frame] || [], scene.overlap, scene.edges);
    metrics.draws++;
    dirty = false;
    metrics.frame = frame;
    metrics.drawn = exact ? frame : -1;   // (the tests wait for an exact frame)
    metrics.drawnGeneration = scene.generation;
    drawTimeline();
    // A latency ends when the frame is drawn with every region's own field.
    if (exact && awaitingDraw.length) {
      const done = performance.now();
      for (const a of awaitingDraw) a.list.push(done - a.t0);
      awaitingDraw = [];
    }
  }
  if (handlesDirty) drawHandles();
  requestAnimationFrame(tick);
}

function drawTimeline() {
  const w = timeline.clientWidth;
  if (timeline.width !== w) timeline.width = w;
  const ctx = timeline.getContext("2d");
  const h = timeline.height;
  ctx.clearRect(0, 0, w, h);
  if (!scene) return;
  const duration = scene.frameCount / scene.fps;
  for (const t of scene.ticks) {
    const x = (t.time / duration) * w;
    ctx.fillStyle = t.kind === "poke" || t.kind === "shake" ? "#f28b82" : "#fbbc04";
    ctx.fillRect(x - 1, 4, 2, h - 8);
  }
  ctx.fillStyle = "#8ab4f8";
  ctx.fillRect((frame / Math.max(1, scene.frameCount)) * w - 1, 0, 3, h);
  $("clock").textContent = `${frame} / ${scene.frameCount - 1}  ${(frame / scene.fps).toFixed(2)} s`;
  $("play").textContent = playing ? "❚❚" : "▶";
}

function seek(k) {
  if (!scene) return;
  frame = Math.max(0, Math.min(scene.frameCount - 1, k));
  clockTime = frame / scene.fps;
  dirty = true;
}

function imagePoint(e) {
  const r = handles.getBoundingClientRect();
  return [(e.clientX - r.left) * (handles.width / r.width), (e.clientY - r.top) * (handles.height / r.height)];
}

function handleAt(e) {
  if (!scene || !showHandles) return null;
  const r = handles.getBoundingClientRect();
  const perScreen = handles.width / r.width;
  const [x, y] = imagePoint(e);
  let best = null;
  for (const s of scene.sketches) {
    const p = pointsOf(s);
    for (const key of ["center", "lt", "rt", "rb", "lb"]) {
      const d = Math.hypot(p[key][0] - x, p[key][1] - y) / perScreen;
      if (d <= HANDLE_RADIUS && (!best || d < best.d)) best = { sketch: s, point: key, d };
    }
  }
  return best;
}

handles.addEventListener("pointerdown", (e) => {
  if (e.button !== 0) return;
  handles.setPointerCapture(e.pointerId);
  const h = handleAt(e);
  if (h) {
    if (!h.sketch.editable) { message(h.sketch.locked || "this sketch is computed by the scene", "warning"); return; }
    drag = { sketch: h.sketch, point: h.point, points: pointsOf(h.sketch), centerSet: !!h.sketch.points.center };
    return;
  }
  pokeStart = { at: imagePoint(e), frame };
});

handles.addEventListener("pointermove", (e) => {
  if (!drag) return;
  const [x, y] = imagePoint(e);
  const p = drag.points;
  p[drag.point] = [x, y];
  if (drag.point === "center") drag.centerSet = true;
  else if (!drag.centerSet) p.center = [(p.lt[0] + p.rt[0] + p.rb[0] + p.lb[0]) / 4, (p.lt[1] + p.rt[1] + p.rb[1] + p.lb[1]) / 4];
  sendEdit();
  drawHandles();
});

function sendEdit() {
  const p = drag.points;
  const s = send({ type: "edit", kind: drag.sketch.kind, index: drag.sketch.index, frame,
                   points: { lt: p.lt, rt: p.rt, rb: p.rb, lb: p.lb, center: drag.centerSet ? p.center : null } });
  if (s) pendingDrags.set(s, performance.now());
}

handles.addEventListener("pointerup", (e) => {
  if (drag) {
    drag = null;
    drawHandlesLater();
    return;
  }
  if (!pokeStart) return;
  const [x1, y1] = imagePoint(e);
  const [x0, y0] = pokeStart.at;
  const at = pokeStart.frame;
  pokeStart = null;
  if (x0 === x1 && y0 === y1) return;
  const t0 = performance.now();
  const s = send({ type: "poke", frame: at, x0, y0, x1, y1 });
  if (s) pendingPoke = { seq: s, t0, frame: at, before: scene.frames };
});

function scrub(e) {
  if (!scene) return;
  const r = timeline.getBoundingClientRect();
  playing = false;
  seek(Math.round(((e.clientX - r.left) / r.width) * (scene.frameCount - 1)));
}
timeline.addEventListener("pointerdown", (e) => { timeline.setPointerCapture(e.pointerId); scrub(e); });
timeline.addEventListener("pointermove", (e) => { if (e.buttons & 1) scrub(e); });
$("play").addEventListener("click", () => { playing = !playing; dirty = true; });

window.addEventListener("keydown", (e) => {
  if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "s") {
    e.preventDefault();
    send({ type: "save" });
    message("saving…");
    return;
  }
  if (e.shiftKey && e.key.startsWith("Arrow")) {
    const dir = { ArrowLeft: [-1.5, 0], ArrowRight: [1.5, 0], ArrowUp: [0, 1.5], ArrowDown: [0, -1.5] }[e.key];
    send({ type: "shake", frame, ax: dir[0], ay: dir[1] });
    e.preventDefault();
    return;
  }
  switch (e.key) {
    case " ": playing = !playing; dirty = true; e.preventDefault(); break;
    case "ArrowLeft": playing = false; seek(frame - 1); break;
    case "ArrowRight": playing = false; seek(frame + 1); break;
    case "Home": seek(0); break;
    case "h": case "H": showHandles = !showHandles; drawHandles(); break;
    case "c": case "C": send({ type: "clear" }); break;
  }
});

window.addEventListener("beforeunload", (e) => {
  if (scene && scene.unsaved) {
    e.preventDefault();
    e.returnValue = "";
  }
});

// For the tests and the benchmark: go to a frame and stop there.
metrics.seek = (k) => { playing = false; seek(k); };
metrics.play = () => { playing = true; };

let socket;
(async () => {
  try {
    renderer = new Renderer(preview, await loadShaders());
    metrics.renderer = renderer;
    socket = connect();
  } catch (err) {
    message(String(err.message || err), "error");
    metrics.errors.push(String(err.message || err));
  }
})();
