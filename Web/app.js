// The browser studio: a thin surface over the studio core the server owns
// (the window's own). The page sends the core's commands and the keys
// pressed (the server's key map, the window's, makes them commands); the
// server sends the core's snapshot (inspector, ticks, status, warnings,
// the export chooser), the scene (frame states, sketches), the soundtrack
// and the data the shaders need. The page plays the clip at its own frame
// rate (Space, arrows, Home and the timeline's scrub move its playhead),
// with the soundtrack (WebAudio: its clock is the playhead's while it
// plays), and draws. Zoom and pan are the page's own, as they are the
// window's: the wheel zooms around the mouse, a middle-button drag or a
// drag with Space held pans, F fits; the handles' layer covers the whole
// picture area, so a corner dragged beside the picture can be taken again.
// The cutout tools are the window's: C cuts out the selected region,
// Shift/Alt + drag paints object/background with the window's brush (6
// screen pixels), Shift + click fits a region around the object there, O
// and clicks make a magnetic outline; the overlay (each cutout's outline,
// the stroke, the outline's points) is drawn as the window draws it.
import { Renderer, loadShaders } from "./render.js";

const $ = (id) => document.getElementById(id);
const stage = $("stage"), handles = $("handles"), timeline = $("timeline");
const HANDLE_RADIUS = 10; // screen pixels within which a press takes a handle
// The window's cutout brush (`CutoutPainter`): a stroke's radius in screen
// pixels, and the move under which a Shift press is a click.
const BRUSH = 6, CLICK_SLOP = 3;
// The window's view rules (its `Layout` and `Navigator`): one wheel notch
// zooms by 1.25; the zoom stops at a picture 4096 px long (or the fit, if
// larger) and at 32 px long (or the fit, if smaller); a pan keeps at least
// 32 px of the picture in the area.
const WHEEL_FACTOR = 1.25, MAX_RENDER_SIDE = 4096, KEEP = 32;

// What the tests and Scripts/bench-browser.sh read.
const metrics = window.wobble = {
  ready: false, generation: -1, frame: 0, drawn: 0, draws: 0,
  pokeLatency: [], dragLatency: [], saved: [], errors: [], exported: [], studio: null, forceDraw: false,
  keys: null, helpShown: false, view: null, sound: null, soundLog: [], cutouts: [], cutoutsReceived: 0,
};

let renderer = null;
let scene = null;            // the last scene message, with its frames
let states = null;           // the states message that came before it
let frame = 0, playing = true, clockTime = 0, lastTick = null;
// While a take records, the playhead is the live clock: from the scripted
// clip's end it runs on (frames past the end, whose states the server
// sends meanwhile) and never loops, as in the window.
let recording = false;
let showHandles = true, dirty = true;
let seq = 0;
let pendingPoke = null;      // { seq, t0, frame, before } until its scene arrives
const pendingDrags = new Map(); // seq -> t0
let awaitingDraw = [];       // latencies to settle at the next exact draw
let drag = null;             // { sketch, point, points } while a handle moves
let pokeStart = null;
let strokePress = null;      // { x, y, moved } (area pixels) while a Shift/Alt stroke paints
let outlinePress = false;    // a press that added a point to the magnetic outline
const outlines = new Map();  // cutout id -> { x0, y0, canvas }: its mask's outline, as the window draws it
let studio = null;           // the core's last snapshot
let tickDrag = null;         // { tick, moved } while a tick is pressed
let mouseAt = null;          // the mouse over the picture (image pixels), where A adds
let image = null;            // { width, height } of the picture
// How the picture sits in the area (as the window's `PictureView`): zoom
// null: fitted (1:1 when it fits, else scaled down, centred); else window
// pixels per image pixel with the picture's top-left at (x, y) in the area.
let view = { zoom: null, x: 0, y: 0 };
let pan = null;              // { x, y, from } while a pan drags
let spaceHeld = false, spaceToggled = false;

// The status area: the page's own line (a disconnection, a script
// error), else the core's: the scene's error, each warning in the warning
// colour, its last message (an error in red), and what the page draws
// otherwise than the renderer.
let ownLine = null, notes = [];
function message(text, cls = "") {
  ownLine = text ? { text, cls } : null;
  showStatus();
}

function showStatus() {
  const lines = [];
  if (ownLine && !(studio && ownLine.text === studio.message)) lines.push(ownLine);
  if (studio) {
    if (studio.sceneError) lines.push({ text: studio.sceneError, cls: "error" });
    for (const w of studio.warnings) lines.push({ text: "warning: " + w, cls: "warning" });
    // The tick under the pointer takes the message's place, as in the window.
    if (studio.hovered) lines.push({ text: studio.hovered, cls: "hovered" });
    else if (studio.message && studio.message !== studio.sceneError) {
      lines.push({ text: studio.message, cls: studio.messageIsError ? "error" : "" });
    }
  }
  for (const n of notes) lines.push({ text: n, cls: "" });
  const m = $("messages");
  m.replaceChildren(...lines.map((l) => {
    const d = document.createElement("div");
    d.textContent = l.text;
    if (l.cls) d.className = l.cls;
    return d;
  }));
}

// The wire protocol's version this page speaks (the server's is in its hello).
const PROTOCOL = 1;

function connect() {
  const token = new URLSearchParams(location.search).get("token");
  const url = `ws://${location.host}/ws` + (token ? `?token=${encodeURIComponent(token)}` : "");
  const ws = new WebSocket(url);
  ws.binaryType = "arraybuffer";
  ws.onmessage = (e) => (typeof e.data === "string" ? onText(JSON.parse(e.data)) : onBinary(e.data));
  ws.onopen = () => ws.send(JSON.stringify({ type: "hello", protocol: PROTOCOL }));
  ws.onclose = () => { message("disconnected from wobble-run serve (reload the page when it runs again)", "error"); metrics.closed = true; };
  return ws;
}

// A message to the core (docs/protocol.md): a command (`{type: "drag", x, y}`),
// a `batch` of them, a `key` or `text`; with the frame shown unless it says another.
function send(obj) {
  if (!socket || socket.readyState !== WebSocket.OPEN) return 0;
  obj.seq = ++seq;
  if (obj.frame === undefined) obj.frame = frame;
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
    if (!image || image.width !== head.width || image.height !== head.height) view = { zoom: null, x: 0, y: 0 };
    image = { width: head.width, height: head.height };
    placePicture();
  } else if (head.type === "sound") {
    onSound(head, buffer.slice(start));
    return;
  } else if (head.type === "states") {
    const frames = decodeStates(new Float64Array(buffer.slice(start)));
    if (head.from === undefined) { states = { generation: head.generation, frames }; return; }
    // Frames past the clip's end (a take records): kept with their run's.
    if (!states || states.generation !== head.generation) return;
    frames.forEach((f, i) => { states.frames[head.from + i] = f; });
    if (frame >= head.from && frame < head.from + frames.length) dirty = true;
    return;
  } else if (head.type === "cutout") {
    // A cutout region's layers (a new id per cutout a run makes): the
    // object then the plate, RGBA8 each over the box, then its mask (a
    // byte a pixel of the box), which the overlay outlines.
    const n = head.width * head.height * 4;
    if (buffer.byteLength < start + 2 * n) return;
    renderer.addCutout(head.id, head.x0, head.y0, head.width, head.height,
                       new Uint8Array(buffer.slice(start, start + n)), new Uint8Array(buffer.slice(start + n, start + 2 * n)));
    metrics.cutoutsReceived++;
    const m = head.width * head.height;
    if (buffer.byteLength >= start + 2 * n + m) {
      outlines.set(head.id, outlineOf(head, new Uint8Array(buffer, start + 2 * n, m)));
      handlesDirty = true;
    }
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
  if (m.type === "hello") {
    if (m.protocol !== PROTOCOL) {
      const line = `wobble-run serve speaks protocol ${m.protocol} and this page protocol ${PROTOCOL}: reload the page`;
      metrics.errors.push(line);
      message(line, "error");
    }
  } else if (m.type === "scene") onScene(m);
  else if (m.type === "studio") onStudio(m.studio);
  else if (m.type === "exported") onExported(m);
  else if (m.type === "keys") { metrics.keys = m.keys; showHelpKeys(); }
  else if (m.type === "saved") {
    metrics.saved.push(m);
    message(m.message, m.ok ? "ok" : "error");   // (the core's status says the same)
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
  renderer.keepCutouts(new Set(m.cutouts || []));
  for (const id of outlines.keys()) if (!(m.cutouts || []).includes(id)) outlines.delete(id);
  metrics.generation = m.generation;
  metrics.frameCount = m.frameCount;
  metrics.sketches = m.sketches;
  metrics.cutouts = m.cutouts || [];
  $("scene").textContent = m.scene;
  $("unsaved").hidden = !m.unsaved;
  notes = m.notes;
  if (pendingPoke && m.answers >= pendingPoke.seq && recording) {
    // Recording, the live clock goes on: the poke shows at the frame due.
    awaitingDraw.push({ list: metrics.pokeLatency, t0: pendingPoke.t0 });
    pendingPoke = null;
  }
  if (pendingPoke && m.answers >= pendingPoke.seq) {
    // The region moves from the frame after the poke: show that frame now.
    const p = pendingPoke;
    pendingPoke = null;
    let k = p.frame;
    while (k < m.frameCount - 1 && !regionsDiffer(m.frames[k], p.before[k])) k++;
    frame = k;
    clockTime = frame / m.fps;
    jumps++;
    playing = true;
    awaitingDraw.push({ list: metrics.pokeLatency, t0: p.t0 });
  }
  for (const [s, t0] of pendingDrags) {
    if (m.answers >= s) { awaitingDraw.push({ list: metrics.dragLatency, t0 }); pendingDrags.delete(s); }
  }
  if (!drag) drawHandlesLater();
  ticksDirty = true;
  if (frame >= m.frameCount && !recording) { frame = 0; clockTime = 0; jumps++; }
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

// The sketch the core has selected, as "call:0" / "added:1" (null: none).
function selectedKey() {
  const k = studio && studio.inspector && studio.inspector.selected;
  return k ? `${k.kind}:${k.index}` : null;
}

// The picture area's size (CSS pixels) and where the picture is in it:
// `scale` area pixels per image pixel, its top-left (x, y) and size.
function area() { return { w: Math.max(1, stage.clientWidth), h: Math.max(1, stage.clientHeight) }; }
function fitScale(aw, ah, enlarging) {
  const s = Math.min(aw / image.width, ah / image.height);
  return enlarging ? s : Math.min(1, s);
}
function clampZoom(z, fit) {
  const side = Math.max(image.width, image.height);
  const hi = Math.max(MAX_RENDER_SIDE / side, Math.min(1, fit));
  const lo = Math.min(KEEP / side, fit, hi);
  return Math.min(Math.max(z, lo), hi);
}
function placement() {
  if (!image) return { scale: 1, x: 0, y: 0, w: 1, h: 1 };
  const a = area();
  if (view.zoom) {
    const s = clampZoom(view.zoom, fitScale(a.w, a.h, true));
    return { scale: s, x: Math.round(view.x), y: Math.round(view.y),
             w: Math.max(1, Math.round(image.width * s)), h: Math.max(1, Math.round(image.height * s)) };
  }
  const s = fitScale(a.w, a.h, false);
  const w = Math.max(1, Math.floor(image.width * s)), h = Math.max(1, Math.floor(image.height * s));
  return { scale: s, x: Math.max(0, Math.floor((a.w - w) / 2)), y: Math.max(0, Math.floor((a.h - h) / 2)), w, h };
}
// `v` with at least KEEP area pixels of the picture left in the area.
function kept(v) {
  const a = area(), w = image.width * v.zoom, h = image.height * v.zoom;
  const x = Math.min(Math.max(v.x, Math.min(KEEP, w) - w), a.w - Math.min(KEEP, w));
  const y = Math.min(Math.max(v.y, Math.min(KEEP, h) - h), a.h - Math.min(KEEP, h));
  return { zoom: v.zoom, x: Math.round(x), y: Math.round(y) };
}
// The view as it is, its zoom and offset (a fitted one's too).
function placedView() {
  const P = placement();
  return view.zoom ? { zoom: P.scale, x: view.x, y: view.y } : { zoom: P.scale, x: P.x, y: P.y };
}
// Zoomed by `factor` around area point (cx, cy): the image point under it stays.
function zoomedView(factor, cx, cy) {
  const P = placement(), a = area();
  const z = clampZoom(P.scale * factor, fitScale(a.w, a.h, true));
  const px = (cx - P.x) / P.scale, py = (cy - P.y) / P.scale;
  return kept({ zoom: z, x: cx - px * z, y: cy - py * z });
}
// The whole picture in the area, as large as it fits (enlarged too), centred.
function fittedView() {
  const a = area(), fit = fitScale(a.w, a.h, true);
  const z = clampZoom(fit, fit);
  const w = Math.round(image.width * z), h = Math.round(image.height * z);
  return { zoom: z, x: Math.floor((a.w - w) / 2), y: Math.floor((a.h - h) / 2) };
}
function showView(v) {
  view = v;
  placePicture();
}
// The picture placed as the view says; the handles' layer the area's size.
function placePicture() {
  if (!image || !renderer) return;
  const P = placement(), c = renderer.canvas.style;
  c.left = `${P.x}px`; c.top = `${P.y}px`; c.width = `${P.w}px`; c.height = `${P.h}px`;
  const a = area(), dpr = window.devicePixelRatio || 1;
  const hw = Math.round(a.w * dpr), hh = Math.round(a.h * dpr);
  if (handles.width !== hw || handles.height !== hh) { handles.width = hw; handles.height = hh; }
  metrics.view = { zoom: view.zoom, scale: P.scale, x: P.x, y: P.y, w: P.w, h: P.h, areaW: a.w, areaH: a.h };
  handlesDirty = true;
}
new ResizeObserver(() => placePicture()).observe(stage);

// Image pixels to area pixels and back (every mapping of the page).
function toArea([x, y]) { const P = placement(); return [x * P.scale + P.x, y * P.scale + P.y]; }
function fromArea([x, y]) { const P = placement(); return [(x - P.x) / P.scale, (y - P.y) / P.scale]; }
function areaPoint(e) { const r = stage.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; }
// The centre of the screen pixel under the pointer (area pixels): the point
// a press, a click or a stroke means, as the window's (its mouse is at a
// window pixel, which it takes at its centre).
function areaPixel(e) {
  const dpr = window.devicePixelRatio || 1, [x, y] = areaPoint(e);
  return [(Math.floor(x * dpr) + 0.5) / dpr, (Math.floor(y * dpr) + 0.5) / dpr];
}
function onPicture([ax, ay]) { const P = placement(); return ax >= P.x && ax < P.x + P.w && ay >= P.y && ay < P.y + P.h; }

function drawHandles() {
  handlesDirty = false;
  const ctx = handles.getContext("2d");
  const dpr = handles.width / Math.max(1, area().w);
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.clearRect(0, 0, handles.width, handles.height);
  // Hidden handles: the empty layer made fully transparent, so the browser
  // does not blend it over every frame (it still takes the pointer).
  const none = !showHandles || !scene || !image;
  handles.style.opacity = none ? "0" : "";
  if (none) return;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  const chosen = selectedKey();
  // As the window's overlay: the other regions, the cutouts' overlay, the
  // selected region on top.
  const isChosen = (s) => `${s.kind}:${s.index}` === chosen;
  for (const s of scene.sketches) if (!isChosen(s)) drawSketch(ctx, s, false);
  drawCutoutOverlay(ctx);
  for (const s of scene.sketches) if (isChosen(s)) drawSketch(ctx, s, true);
}

// A sketch's four curves, its handles and its name (white, thicker, when selected).
function drawSketch(ctx, s, selected) {
  const q = drag && drag.sketch === s ? drag.points : pointsOf(s);
  const p = {};
  for (const key of ["lt", "rt", "rb", "lb", "center"]) p[key] = toArea(q[key]);
  const mid = (a, b) => [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2];
  const mL = mid(p.lt, p.lb), mT = mid(p.lt, p.rt), mR = mid(p.rt, p.rb), mB = mid(p.rb, p.lb);
  ctx.lineWidth = selected ? 3 : 2;
  ctx.strokeStyle = selected ? "#ffffff" : s.editable ? "rgba(138,180,248,0.95)" : "rgba(154,160,166,0.9)";
  ctx.beginPath();
  ctx.moveTo(...mL);
  ctx.quadraticCurveTo(...p.lt, ...mT);
  ctx.quadraticCurveTo(...p.rt, ...mR);
  ctx.quadraticCurveTo(...p.rb, ...mB);
  ctx.quadraticCurveTo(...p.lb, ...mL);
  ctx.stroke();
  for (const key of ["lt", "rt", "rb", "lb", "center"]) {
    ctx.beginPath();
    ctx.arc(p[key][0], p[key][1], key === "center" ? 5 : 4, 0, 2 * Math.PI);
    ctx.fillStyle = s.editable ? (key === "center" ? "#fbbc04" : "#8ab4f8") : "#9aa0a6";
    ctx.fill();
  }
  if (s.name) {
    ctx.font = "12px system-ui";
    ctx.fillStyle = "#fff";
    ctx.fillText(s.name, p.lt[0], p.lt[1] - 6);
  }
}

// The outline of a cutout's mask over its box, as the window's
// `CutoutPainter` draws it (at image pixels, scaled with the picture): the
// pixels above 127 with a 4-neighbour at or below it (or the picture's
// edge: the box reaches past the mask everywhere else) are dashed magenta
// and white, 4 pixels each, and their neighbours outside the object dark.
function outlineOf(head, mask) {
  const w = head.width, h = head.height;
  const canvas = document.createElement("canvas");
  canvas.width = Math.max(1, w);
  canvas.height = Math.max(1, h);
  const ctx = canvas.getContext("2d");
  const img = ctx.createImageData(canvas.width, canvas.height);
  const px = img.data;
  const plot = (i, r, g, b) => { px[4 * i] = r; px[4 * i + 1] = g; px[4 * i + 2] = b; px[4 * i + 3] = 255; };
  const boundary = [];
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      if (mask[i] <= 127) continue;
      if (x === 0 || y === 0 || x === w - 1 || y === h - 1 || mask[i - 1] <= 127 || mask[i + 1] <= 127 ||
          mask[i - w] <= 127 || mask[i + w] <= 127) boundary.push(i);
    }
  }
  for (const i of boundary) {
    const x = i % w, y = (i - x) / w;
    for (const [nx, ny] of [[x - 1, y], [x + 1, y], [x, y - 1], [x, y + 1]]) {
      if (nx >= 0 && ny >= 0 && nx < w && ny < h && mask[ny * w + nx] <= 127) plot(ny * w + nx, 20, 20, 20);
    }
  }
  for (const i of boundary) {
    const x = i % w, y = (i - x) / w;
    if (Math.floor((x + head.x0 + y + head.y0) / 4) % 2 === 0) plot(i, 255, 40, 200); else plot(i, 255, 255, 255);
  }
  ctx.putImageData(img, 0, 0);
  return { x0: head.x0, y0: head.y0, canvas };
}

// What the window paints over the picture for the cutouts: every cutout's
// outline, the magnetic outline being clicked (its points joined by
// lines: the first a white square, the others yellow) and the stroke
// being painted (green: object, red: background, with its brush).
function drawCutoutOverlay(ctx) {
  const P = placement();
  ctx.imageSmoothingEnabled = false;
  for (const o of outlines.values()) {
    const [x, y] = toArea([o.x0, o.y0]);
    ctx.drawImage(o.canvas, x, y, o.canvas.width * P.scale, o.canvas.height * P.scale);
  }
  const points = studio && studio.outline;
  if (points && points.length) {
    const at = points.map((p) => toArea([p.x, p.y]));
    if (at.length > 1) {
      ctx.strokeStyle = "rgb(255,220,40)";
      ctx.lineWidth = Math.max(1, 1.5 * P.scale);
      ctx.lineCap = ctx.lineJoin = "round";
      ctx.beginPath();
      at.forEach(([x, y], i) => (i ? ctx.lineTo(x, y) : ctx.moveTo(x, y)));
      ctx.stroke();
    }
    // (Squares of whole image pixels around the point's pixel: 7 and 5 a side.)
    points.forEach((p, i) => {
      const r = i === 0 ? 3 : 2, [x, y] = toArea([Math.floor(p.x) - r, Math.floor(p.y) - r]);
      ctx.fillStyle = i === 0 ? "rgb(255,255,255)" : "rgb(255,220,40)";
      ctx.fillRect(x, y, (2 * r + 1) * P.scale, (2 * r + 1) * P.scale);
    });
  }
  const s = studio && studio.stroke;
  if (s && s.points.length) {
    const colour = s.object ? "rgb(40,230,60)" : "rgb(255,60,40)";
    const at = s.points.map((p) => toArea([p.x, p.y])), r = s.radius * P.scale;
    ctx.fillStyle = colour;
    ctx.beginPath();
    ctx.arc(at[0][0], at[0][1], r, 0, 2 * Math.PI);
    ctx.fill();
    if (at.length > 1) {
      ctx.strokeStyle = colour;
      ctx.lineWidth = 2 * r;
      ctx.lineCap = ctx.lineJoin = "round";
      ctx.beginPath();
      at.forEach(([x, y], i) => (i ? ctx.lineTo(x, y) : ctx.moveTo(x, y)));
      ctx.stroke();
    }
  }
}

// The soundtrack: the server's track (mono float32 samples, their rate,
// the clip sample of the first one, the clip's length in samples), laid
// on the clip's time in one AudioBuffer that loops with the clip. It plays
// while the page plays (silent while paused, stepping, scrubbing or
// recording a take, as in the window), from the playhead; muted when the
// core is (M); and while it plays its clock is the playhead's, so picture
// and sound cannot drift apart. Browsers start sound only after a user
// gesture: the AudioContext is made at the first key or click.
let track = null;            // { id, rate, start, length, samples } (null: no soundtrack)
let audio = null;            // { ctx, gain, buffer, bufferOf }
let voice = null;            // { source, at: ctx time started, offset: clip seconds, jumps } while it plays
let jumps = 0;               // counts the playhead's jumps (a seek, a play toggle)
let muted = false;

function onSound(head, payload) {
  track = head.id ? { id: head.id, rate: head.rate, start: head.start, length: head.length, samples: new Float32Array(payload) } : null;
  metrics.sound = track ? { id: track.id, rate: track.rate, start: track.start, length: track.length, count: track.samples.length } : null;
  stopVoice();
  syncSound();
}

function startSound() {
  if (!audio) {
    const Ctx = window.AudioContext || window.webkitAudioContext;
    if (!Ctx) return;
    const ctx = new Ctx();
    const gain = ctx.createGain();
    gain.connect(ctx.destination);
    audio = { ctx, gain, buffer: null, bufferOf: 0 };
  }
  if (audio.ctx.state === "suspended") audio.ctx.resume();
}
window.addEventListener("pointerdown", startSound, true);

// The clip's sound from clip sample 0 to its length (AudioTrack.fill's):
// silence where the sound is not.
function soundBuffer() {
  if (!audio || !track) return null;
  if (audio.bufferOf === track.id) return audio.buffer;
  const b = audio.ctx.createBuffer(1, Math.max(1, track.length), track.rate);
  const out = b.getChannelData(0);
  const from = Math.max(0, track.start), to = Math.min(track.length, track.start + track.samples.length);
  if (to > from) out.set(track.samples.subarray(from - track.start, to - track.start), from);
  audio.buffer = b;
  audio.bufferOf = track.id;
  return b;
}

function stopVoice() {
  if (!voice) return;
  try { voice.source.stop(); } catch (_) { /* already stopped */ }
  voice.source.disconnect();
  voice = null;
}

// Plays or stops the sound as the playhead does now.
function syncSound() {
  const want = playing && !recording && !!scene && !!track && !!audio && audio.ctx.state === "running";
  if (voice && (!want || voice.jumps !== jumps || voice.id !== track.id)) stopVoice();
  if (audio) audio.gain.gain.value = muted ? 0 : 1;
  if (!want || voice) { metrics.soundPlaying = !!voice; return; }
  const b = soundBuffer();
  const length = b.length / track.rate;
  const source = audio.ctx.createBufferSource();
  source.buffer = b;
  source.loop = true;
  source.loopStart = 0;
  source.loopEnd = length;
  source.connect(audio.gain);
  const offset = ((clockTime % length) + length) % length;
  const at = audio.ctx.currentTime;
  source.start(at, offset);
  voice = { source, at, offset, jumps, id: track.id, length };
  metrics.soundPlaying = true;
}

// The clip time heard now (nil: no sound plays): the sample the context
// plays, less its output latency, from where it started, looping.
function heardTime() {
  if (!voice || audio.ctx.state !== "running") return null;
  const since = Math.max(0, audio.ctx.currentTime - (audio.ctx.outputLatency || 0) - voice.at);
  return (voice.offset + since) % voice.length;
}

function tick(now) {
  syncSound();
  const heard = playing && scene ? heardTime() : null;
  if (lastTick !== null && playing && scene) {
    // While the sound plays, its clock is the playhead's (it loops with the clip).
    if (heard !== null) clockTime = heard;
    else clockTime += (now - lastTick) / 1000;
    const k = Math.floor(clockTime * scene.fps + 1e-9);
    if (k !== frame) {
      frame = recording ? k : scene.frameCount ? k % scene.frameCount : 0;
      if (k >= scene.frameCount && !recording) clockTime = frame / scene.fps;
      dirty = true;
    }
  }
  lastTick = now;
  if (scene && (dirty || metrics.forceDraw)) {
    // Past the frames the page has (a take's live clock ahead of the
    // states sent), the last one stands in.
    const shownFrames = scene.frames;
    const exact = renderer.draw(shownFrames[Math.min(frame, shownFrames.length - 1)] || [], scene.overlap, scene.edges) &&
      frame < shownFrames.length;
    metrics.draws++;
    dirty = false;
    metrics.frame = frame;
    metrics.drawn = exact ? frame : -1;   // (the tests wait for an exact frame)
    metrics.drawnGeneration = scene.generation;
    if (heard !== null && metrics.soundLog.length < 1000) metrics.soundLog.push([frame, heard]);
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

// The timeline's seconds: the clip the page plays.
function timelineSeconds() { return scene ? scene.frameCount / scene.fps : 1; }

// The timeline: its ticks drawn on its canvas when they change (a scene,
// a snapshot, a tick dragged, a new size); the playhead a marker moved
// over it, and the clock beside it, written only when they change, so
// playing redraws nothing but the picture.
let ticksDirty = true;
const shown = { playhead: null, clock: null, play: null };
new ResizeObserver(() => { ticksDirty = true; dirty = true; }).observe(timeline);

function drawTicks() {
  ticksDirty = false;
  const w = timeline.clientWidth;
  if (timeline.width !== w) timeline.width = w;
  const ctx = timeline.getContext("2d");
  const h = timeline.height;
  ctx.clearRect(0, 0, w, h);
  if (!scene) return;
  const duration = timelineSeconds();
  for (const t of (studio ? studio.ticks : [])) {
    const time = tickDrag && tickDrag.tick === t && tickDrag.at !== undefined ? tickDrag.at : t.time;
    const x = (time / duration) * w;
    ctx.fillStyle = t.selected ? "#ffffff" : t.sound ? "#81c995" : t.performed ? "#f28b82" : t.ref ? "#fbbc04" : "#c5a45a";
    const inset = t.selected ? 1 : t.sound ? 14 : 5;
    ctx.fillRect(x - (t.selected ? 2 : 1), inset, t.selected ? 4 : 2, h - 2 * inset + (t.sound ? 10 : 0));
  }
}

function drawTimeline() {
  if (ticksDirty) drawTicks();
  if (!scene) return;
  const x = (Math.min(frame, scene.frameCount) / Math.max(1, scene.frameCount)) * timeline.width - 1;
  if (x !== shown.playhead) { $("playhead").style.transform = `translateX(${x}px)`; shown.playhead = x; }
  const clock = `${frame} / ${scene.frameCount - 1}  ${(frame / scene.fps).toFixed(2)} s`;
  if (clock !== shown.clock) { $("clock").textContent = clock; shown.clock = clock; }
  const play = playing ? "❚❚" : "▶";
  if (play !== shown.play) { $("play").textContent = play; shown.play = play; }
}

function seek(k) {
  if (!scene) return;
  jumps++;
  frame = Math.max(0, Math.min(scene.frameCount - 1, k));
  clockTime = frame / scene.fps;
  dirty = true;
}

// The image point under the pointer (beside the picture too): its pixel's centre.
function imagePoint(e) { return fromArea(areaPixel(e)); }

const xy = ([x, y]) => ({ x, y });
// Image pixels per screen pixel (a handle's radius is in screen pixels).
function perScreen() { return 1 / placement().scale; }

function handleAt(e) {
  if (!scene || !showHandles) return null;
  const [x, y] = areaPoint(e);
  let best = null;
  for (const s of scene.sketches) {
    const p = pointsOf(s);
    for (const key of ["center", "lt", "rt", "rb", "lb"]) {
      const [hx, hy] = toArea(p[key]);
      const d = Math.hypot(hx - x, hy - y);
      if (d <= HANDLE_RADIUS && (!best || d < best.d)) best = { sketch: s, point: key, d };
    }
  }
  return best;
}

handles.addEventListener("contextmenu", (e) => e.preventDefault());

// The wheel zooms around the mouse (as the window's: 1.25 a notch).
stage.addEventListener("wheel", (e) => {
  if (!image) return;
  e.preventDefault();
  const per = e.deltaMode === 1 ? 3 : e.deltaMode === 2 ? 1 : 100;
  const steps = Math.max(-20, Math.min(20, -e.deltaY / per));
  if (!steps) return;
  const [cx, cy] = areaPoint(e);
  showView(zoomedView(Math.pow(WHEEL_FACTOR, steps), Math.round(cx), Math.round(cy)));
  message(`zoom ${Math.round(placement().scale * 100)}% (F fits)`);
}, { passive: false });

handles.addEventListener("pointerdown", (e) => {
  closeHelp();
  const at = imagePoint(e);
  // A middle-button drag, or a drag with Space held, pans; a Space press
  // used to pan gives its play/pause back.
  if (e.button === 1 || (e.button === 0 && spaceHeld)) {
    e.preventDefault();
    handles.setPointerCapture(e.pointerId);
    if (e.button === 0 && spaceToggled) { playing = !playing; dirty = true; }
    spaceToggled = false;
    pan = { x: e.clientX, y: e.clientY, from: placedView() };
    handles.classList.add("panning");
    return;
  }
  // A right click or Ctrl+click selects the region there.
  if (e.button === 2 || (e.button === 0 && e.ctrlKey)) {
    send({ type: "select", ...xy(at), radius: HANDLE_RADIUS * perScreen() });
    return;
  }
  if (e.button !== 0) return;
  handles.setPointerCapture(e.pointerId);
  // Shift or Alt: a cutout stroke (object / background) with the window's
  // brush; a Shift press that does not move is a click that fits a region
  // around the object there.
  if (e.shiftKey || e.altKey) {
    e.preventDefault();
    const [ax, ay] = areaPoint(e);
    strokePress = { x: ax, y: ay, moved: false };
    send({ type: "strokeBegin", ...xy(at), radius: BRUSH * perScreen(), object: e.shiftKey });
    return;
  }
  // Outlining (O): a click adds a point on the object's edge (no poke, no handle).
  if (studio && studio.outline) {
    outlinePress = true;
    send({ type: "outlinePoint", ...xy(at) });
    return;
  }
  const h = handleAt(e);
  if (h && !studio?.recording) {
    if (!h.sketch.editable) { message(h.sketch.locked || "this sketch is computed by the scene", "warning"); return; }
    message("");
    // The core takes the handle (and selects its region); the page moves
    // it meanwhile, by the mouse's move from the press.
    const points = pointsOf(h.sketch);
    drag = { sketch: h.sketch, point: h.point, points, centerSet: !!h.sketch.points.center, start: at, p0: points[h.point] };
    send({ type: "grab", ...xy(points[h.point]), radius: HANDLE_RADIUS * perScreen() });
    return;
  }
  // A poke starts on the picture only.
  if (onPicture(areaPoint(e))) pokeStart = { at, frame };
});

handles.addEventListener("pointermove", (e) => {
  if (pan) {
    showView(kept({ zoom: pan.from.zoom, x: pan.from.x + (e.clientX - pan.x), y: pan.from.y + (e.clientY - pan.y) }));
    return;
  }
  const ap = areaPoint(e);
  mouseAt = onPicture(ap) ? fromArea(areaPixel(e)) : null;
  if (strokePress) { strokeTo(e); return; }
  if (!drag) return;
  // The handle follows the mouse, kept inside the picture area (where it
  // can be taken again), beside the picture too.
  const m = imagePoint(e), a = area();
  let [wx, wy] = toArea([drag.p0[0] + m[0] - drag.start[0], drag.p0[1] + m[1] - drag.start[1]]);
  wx = Math.min(Math.max(wx, 0), a.w - 1);
  wy = Math.min(Math.max(wy, 0), a.h - 1);
  const [x, y] = fromArea([wx, wy]);
  const p = drag.points;
  p[drag.point] = [x, y];
  if (drag.point === "center") drag.centerSet = true;
  else if (!drag.centerSet) p.center = [(p.lt[0] + p.rt[0] + p.rb[0] + p.lb[0]) / 4, (p.lt[1] + p.rt[1] + p.rb[1] + p.lb[1]) / 4];
  const s = send({ type: "drag", x, y });
  if (s) pendingDrags.set(s, performance.now());
  drawHandles();
});
handles.addEventListener("pointerleave", () => { mouseAt = null; });

// A stroke goes on once the pointer left the press by a click's slop (as the window's).
function strokeTo(e) {
  const [ax, ay] = areaPoint(e);
  if (!strokePress.moved && Math.abs(ax - strokePress.x) < CLICK_SLOP && Math.abs(ay - strokePress.y) < CLICK_SLOP) return;
  strokePress.moved = true;
  send({ type: "strokeTo", ...xy(imagePoint(e)) });
}

handles.addEventListener("pointerup", (e) => {
  if (pan) {
    pan = null;
    handles.classList.remove("panning");
    return;
  }
  if (outlinePress) { outlinePress = false; return; }
  if (strokePress) {
    strokeTo(e);
    strokePress = null;
    send({ type: "strokeEnd" });
    return;
  }
  if (drag) {
    drag = null;
    send({ type: "dragEnd" });
    drawHandlesLater();
    return;
  }
  if (!pokeStart) return;
  const [x1, y1] = imagePoint(e);
  const [x0, y0] = pokeStart.at;
  const at = pokeStart.frame;
  pokeStart = null;
  if (x0 === x1 && y0 === y1) {
    // A click: selects the region there.
    send({ type: "select", x: x0, y: y0, radius: HANDLE_RADIUS * perScreen() });
    return;
  }
  const t0 = performance.now();
  const s = send({ type: "batch", frame: at, commands: [{ type: "pokeBegin", x: x0, y: y0 }, { type: "pokeEnd", x: x1, y: y1 }] });
  if (s) pendingPoke = { seq: s, t0, frame: at, before: scene.frames };
});

// The timeline: a press near a tick selects it (a baked one then drags),
// else it scrubs the page's playhead.
function timelineTime(e) {
  const r = timeline.getBoundingClientRect();
  return Math.max(0, Math.min(1, (e.clientX - r.left) / r.width)) * timelineSeconds();
}

function tickNear(e) {
  if (!studio) return null;
  const r = timeline.getBoundingClientRect();
  const x = e.clientX - r.left;
  let best = null;
  for (const t of studio.ticks) {
    const d = Math.abs((t.time / timelineSeconds()) * r.width - x);
    if (t.ref && d <= 5 && (!best || d < best.d)) best = { t, d };
  }
  return best && best.t;
}

function scrub(e) {
  if (!scene || recording) return;
  playing = false;
  seek(Math.round((timelineTime(e) / timelineSeconds()) * scene.frameCount));
}
timeline.addEventListener("pointerdown", (e) => {
  timeline.setPointerCapture(e.pointerId);
  const t = tickNear(e);
  send({ type: "pressTick", ref: t ? t.ref : null });
  if (t) { tickDrag = { tick: t, baked: t.ref && t.ref.kind === "baked" }; return; }
  scrub(e);
});
// The tick under the pointer is named by the core (among its ticks as they
// are now: a deleted one is named no more); told when the pointer comes
// near another tick or leaves them.
let hoverSent = null;
function hover(e) {
  let near = null;
  if (studio && e) {
    const r = timeline.getBoundingClientRect();
    const x = e.clientX - r.left;
    for (const t of studio.ticks) {
      const d = Math.abs((t.time / timelineSeconds()) * r.width - x);
      if (d <= 5 && (!near || d < near.d)) near = { t, d };
    }
  }
  const key = near ? String(near.t.time) : null;
  if (key === hoverSent) return;
  hoverSent = key;
  const within = near ? (5.5 / Math.max(1, timeline.getBoundingClientRect().width)) * timelineSeconds() : 0;
  send({ type: "hoverTimeline", at: near ? near.t.time : null, within: near ? within : 0 });
}
timeline.addEventListener("pointerleave", () => hover(null));
timeline.addEventListener("pointermove", (e) => {
  if (!(e.buttons & 1)) { hover(e); return; }
  if (tickDrag) {
    if (!tickDrag.baked) return;
    tickDrag.at = timelineTime(e);
    send({ type: "dragTick", to: tickDrag.at });
    ticksDirty = true;
    dirty = true;
    return;
  }
  scrub(e);
});
timeline.addEventListener("pointerup", (e) => {
  if (tickDrag && tickDrag.at !== undefined) send({ type: "endTickDrag", at: timelineTime(e) });
  tickDrag = null;
  ticksDirty = true;
});
$("play").addEventListener("click", () => {
  if (recording) { send({ type: "togglePlay" }); return; }   // refused by the core, which says why
  playing = !playing;
  dirty = true;
});

// The core's snapshot: the inspector, ticks, status, chooser, title.
function onStudio(s) {
  if (!studio || s.message !== studio.message) ownLine = null;
  studio = s;
  metrics.studio = s;
  document.title = s.title;
  $("unsaved").hidden = !s.unsaved;
  $("recording").hidden = !s.recording;
  if (s.recording && !recording && scene) {
    // The take's live clock starts at the scripted clip's end, playing.
    clockTime = s.scriptedDuration;
    frame = Math.floor(clockTime * scene.fps + 1e-9);
    playing = true;
    dirty = true;
  }
  // Stopped, it plays on from there (looping again, into the clip).
  recording = s.recording;
  metrics.recording = recording;
  muted = !!s.muted;
  if (audio) audio.gain.gain.value = muted ? 0 : 1;   // at once, not at the next frame drawn
  $("muted").hidden = !muted || !track;
  if (s.handlesShown !== showHandles) showHandles = s.handlesShown;
  showStatus();
  showInspector(s.inspector);
  showChooser(s.chooserChoices, s.chooserRow);
  drawHandlesLater();
  ticksDirty = true;
  dirty = true;
}

// The inspector: the selected region's rows; a change sends the core's
// command (a number: setParameter, a choice: a press on it, the name: rename).
let shownInspector = null;
function showInspector(ins) {
  const json = JSON.stringify(ins);
  const box = $("inspector-rows");
  if (json === shownInspector && !box.contains(document.activeElement)) return;
  if (box.contains(document.activeElement) && shownInspector && ins &&
      JSON.stringify(ins.selected) === JSON.stringify(JSON.parse(shownInspector).selected)) {
    // Being typed into: only the other rows' values would change; kept.
    shownInspector = json;
    return;
  }
  shownInspector = json;
  $("inspector-empty").hidden = !!ins;
  const rows = [];
  if (ins) {
    const head = document.createElement("p");
    head.className = "origin";
    head.textContent = ins.origin;
    rows.push(head);
    if (ins.readOnly) {
      const ro = document.createElement("p");
      ro.className = "warning";
      ro.textContent = ins.readOnly;
      rows.push(ro);
    }
    ins.rows.forEach((r, i) => {
      const label = document.createElement("label");
      label.className = i === ins.focused ? "row focused" : "row";
      const name = document.createElement("span");
      name.textContent = r.key;
      label.append(name);
      let input;
      if (r.choices) {
        input = document.createElement("select");
        for (const c of r.choices) {
          const o = document.createElement("option");
          o.value = o.textContent = c;
          input.append(o);
        }
        input.value = r.text;
        input.addEventListener("change", () => send({ type: "inspectorPress", row: i, choice: input.value, fraction: 0 }));
      } else if (r.value !== undefined && r.value !== null) {
        input = document.createElement("input");
        input.type = "number";
        input.step = "any";
        input.value = String(r.value);
        input.addEventListener("change", () => {
          const v = Number(input.value);
          if (input.value !== "" && Number.isFinite(v)) send({ type: "setParameter", key: r.key, value: v });
        });
      } else {
        input = document.createElement("input");
        input.type = "text";
        input.value = ins.typing ?? r.text;
        input.addEventListener("change", () => send({ type: "rename", name: input.value }));
      }
      input.name = r.key;
      input.disabled = !!ins.readOnly;
      label.append(input);
      rows.push(label);
    });
  }
  box.replaceChildren(...rows);
}

let shownChooser = null;
function showChooser(choices, row) {
  const json = JSON.stringify([choices, row]);
  if (json === shownChooser) return;
  shownChooser = json;
  $("chooser").hidden = !choices;
  if (!choices) return;
  $("chooser-rows").replaceChildren(...choices.map((c, i) => {
    const li = document.createElement("li");
    li.textContent = c;
    li.className = i === row ? "chosen" : "";
    li.addEventListener("click", () => send({ type: "chooserChoose", row: i }));
    return li;
  }));
}

// An export ended in the server: its line, and its file offered as a download.
function onExported(m) {
  metrics.exported.push(m);
  const box = $("download");
  if (!m.url) { box.hidden = true; return; }
  const token = new URLSearchParams(location.search).get("token");
  const a = document.createElement("a");
  a.href = m.url + (token ? `?token=${encodeURIComponent(token)}` : "");
  a.download = decodeURIComponent(m.url.split("/").pop());
  a.textContent = `download ${a.download}`;
  box.replaceChildren(a);
  box.hidden = false;
  a.click();
}

// Browser key names as the studio's (`StudioKey`): the server's key map,
// the window's, says what each does in the studio's state now.
const KEYS = {
  ArrowLeft: "left", ArrowRight: "right", ArrowUp: "up", ArrowDown: "down", Home: "home", Escape: "escape",
  Backspace: "backspace", Tab: "tab", Enter: "enter", PageUp: "pageUp", PageDown: "pageDown", Delete: "delete",
  "-": "minus", "+": "plus", "=": "plus", F1: "help", "?": "help", " ": "space",
};
const LETTERS = new Set(["h", "r", "a", "s", "z", "f", "e", "p", "y", "l", "b", "m", "c", "o"]);

// The keys' help (F1 or ?, as the window's sheet): the core's list, sent
// by the server when the page connects; any key or a click closes it.
function showHelpKeys() {
  $("help-keys").replaceChildren(...(metrics.keys || []).map((k) => {
    const tr = document.createElement("tr");
    const a = document.createElement("td"), b = document.createElement("td");
    a.textContent = k.keys;
    b.textContent = k.what;
    tr.append(a, b);
    return tr;
  }));
}
function openHelp() {
  $("help-message").textContent = studio && studio.message ? "last message:\n" + studio.message : "";
  $("help-sheet").hidden = false;
  metrics.helpShown = true;
}
function closeHelp() {
  $("help-sheet").hidden = true;
  metrics.helpShown = false;
}
$("help-sheet").addEventListener("pointerdown", closeHelp);

window.addEventListener("keyup", (e) => { if (e.key === " ") spaceHeld = false; });
window.addEventListener("blur", () => { spaceHeld = false; });

window.addEventListener("keydown", (e) => {
  startSound();   // (the first key or click lets the page's sound start)
  const t = e.target;
  if (t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA")) return;
  const ctrl = e.ctrlKey || e.metaKey;
  const lower = e.key.length === 1 ? e.key.toLowerCase() : e.key;
  const name = KEYS[e.key] || (LETTERS.has(lower) ? lower : "other");
  // A held Space repeats: it pans with a drag, it does not play/pause again.
  if (name === "space" && e.repeat) { e.preventDefault(); return; }
  const busy = studio && (studio.chooserRow !== null && studio.chooserRow !== undefined || studio.askingToQuit ||
                          (studio.inspector && studio.inspector.typing !== null && studio.inspector.typing !== undefined));
  const typing = studio && (studio.askingToQuit || (studio.inspector && studio.inspector.typing !== null && studio.inspector.typing !== undefined));
  if (!typing) {
    if (name !== "space") spaceToggled = false;
    // The help is up: any key closes it.
    if (metrics.helpShown) { closeHelp(); e.preventDefault(); return; }
    if (name === "help") { openHelp(); e.preventDefault(); return; }
    // Zoom is the page's: F fits, whatever the studio is doing.
    if (name === "f" && !ctrl && !busy && image) {
      showView(fittedView());
      message(`fitted: ${Math.round(placement().scale * 100)}% (wheel zooms, middle or Space+drag pans)`);
      e.preventDefault();
      return;
    }
  }
  // The page's playhead is its own: Space, the arrows and Home move it.
  if (!busy && !recording && !ctrl && !e.shiftKey && ["space", "left", "right", "home"].includes(name)) {
    if (name === "space") { playing = !playing; dirty = true; spaceHeld = true; spaceToggled = true; }
    else if (name === "home") { playing = false; seek(0); }   // as the window: to the start, paused
    else { playing = false; seek(frame + (name === "left" ? -1 : 1)); }
    e.preventDefault();
    return;
  }
  if (name === "space") spaceHeld = true;
  if (name === "other" && (ctrl || e.key.length !== 1)) return;
  const msg = { type: "key", name, shift: e.shiftKey, ctrl };
  // A adds at the mouse on the picture, else at the middle of the area (zoomed: the part in view).
  if (name === "a" && image) Object.assign(msg, xy(mouseAt || fromArea([area().w / 2, area().h / 2])));
  if (e.key.length === 1 && !ctrl) msg.text = e.key;
  send(msg);
  if (ctrl && name === "s") message("saving…");
  e.preventDefault();
});

window.addEventListener("beforeunload", (e) => {
  if (studio ? studio.unsaved : scene && scene.unsaved) {
    e.preventDefault();
    e.returnValue = "";
  }
});

// For the tests and the benchmark: go to a frame and stop there.
metrics.seek = (k) => { playing = false; seek(k); };
metrics.play = () => { playing = true; };
Object.defineProperty(metrics, "playing", { get: () => playing });
// Image pixels to page (client) coordinates, as the page maps them.
metrics.toPage = (x, y) => {
  const [ax, ay] = toArea([x, y]), r = stage.getBoundingClientRect();
  return [r.left + ax, r.top + ay];
};
// The sound the page plays at clip sample i (its buffer; null: none built).
metrics.soundSample = (i) => {
  const b = audio && track ? soundBuffer() : null;
  return b ? b.getChannelData(0)[i] : null;
};
metrics.soundState = () => ({ ctx: audio ? audio.ctx.state : null, playing: !!voice, muted,
                              gain: audio ? audio.gain.gain.value : null, offset: voice ? voice.offset : null });
// The image pixels where the handles' layer (the overlay) is colour r, g, b
// now, as [x, y] (drawn first; at the zoom shown, whole image pixels).
metrics.overlayPixels = (r, g, b) => {
  drawHandles();
  const d = handles.getContext("2d").getImageData(0, 0, handles.width, handles.height).data;
  const P = placement(), dpr = handles.width / area().w, out = [];
  for (let i = 0; i < d.length; i += 4) {
    if (d[i] !== r || d[i + 1] !== g || d[i + 2] !== b || d[i + 3] !== 255) continue;
    const k = i / 4, x = k % handles.width, y = (k - x) / handles.width;
    out.push([Math.floor((x / dpr - P.x) / P.scale), Math.floor((y / dpr - P.y) / P.scale)]);
  }
  return out;
};
// A message as the page sends it (the tests' malformed ones too).
metrics.sendRaw = (text) => socket.send(text);

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
