// <wobble-view src="scene.json">: a live jelly on any web page, no server.
// Plays a scene bundle (what `wobble-run SCENE -o clip.html` or
// `--format web` writes) as the headless render does, with the studio's
// WebGL2 renderer (render.js) and the engine's motion models in the page
// (wobble-motion.js): a pointer drag pokes the region under it, device
// motion shakes the regions, `prefers-reduced-motion` holds it still, and a
// browser without WebGL2 shows the still picture.
//
// API: play(), pause(), paused, currentTime (s; set while paused it shows
// exactly the render's frame at that time), duration, loop, ready (and a
// `ready` event), poke(x, y, dx, dy) in image pixels.
import { Renderer, loadShaders } from "./render.js";
import { Timeline, Profile } from "./wobble-motion.js";

// The shader files, when the player was written with them (a clip.html or
// a --format web folder); else fetched from shaders/ beside the page.
const GIVEN_SHADERS = typeof WOBBLE_SHADERS === "object" ? WOBBLE_SHADERS : null; // eslint-disable-line no-undef
const G = 9.80665;

// The bytes of a data: URL.
function dataBytes(url) {
  const comma = url.indexOf(",");
  const bin = atob(url.slice(comma + 1));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return new Blob([out], { type: url.slice(5, url.indexOf(";")) });
}

// An image's straight RGBA bytes, rows top to bottom, exactly as stored (no
// premultiplication, no colour conversion): decoded to an ImageBitmap,
// uploaded to a WebGL2 texture and read back.
async function decodePixels(url) {
  const blob = url.startsWith("data:") ? dataBytes(url) : await (await fetch(url)).blob();
  const bmp = await createImageBitmap(blob, { premultiplyAlpha: "none", colorSpaceConversion: "none" });
  const c = document.createElement("canvas");
  const gl = c.getContext("webgl2");
  const t = gl.createTexture();
  gl.bindTexture(gl.TEXTURE_2D, t);
  gl.pixelStorei(gl.UNPACK_PREMULTIPLY_ALPHA_WEBGL, false);
  gl.pixelStorei(gl.UNPACK_COLORSPACE_CONVERSION_WEBGL, gl.NONE);
  gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA8, gl.RGBA, gl.UNSIGNED_BYTE, bmp);
  const fb = gl.createFramebuffer();
  gl.bindFramebuffer(gl.FRAMEBUFFER, fb);
  gl.framebufferTexture2D(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0, gl.TEXTURE_2D, t, 0);
  const px = new Uint8Array(bmp.width * bmp.height * 4);
  gl.readPixels(0, 0, bmp.width, bmp.height, gl.RGBA, gl.UNSIGNED_BYTE, px);
  gl.getExtension("WEBGL_lose_context")?.loseContext();
  return { width: bmp.width, height: bmp.height, pixels: px };
}

const STYLE = ":host{display:inline-block;max-width:100%;position:relative}"
  + "canvas,img{display:block;max-width:100%;height:auto;touch-action:none}";

export class WobbleView extends HTMLElement {
  static get observedAttributes() { return ["src", "loop"]; }

  constructor() {
    super();
    this.attachShadow({ mode: "open" }).innerHTML = `<style>${STYLE}</style><canvas part="canvas"></canvas>`;
    this._ready = false;
    this._paused = true;
    this._time = 0;           // clip time while paused; the clock's origin while playing
    this._wall = 0;
    this._loop = true;
    this._drag = null;
    this._asked = false;
    this.still = false;       // showing the still picture (no WebGL2)
    this.frameTime = null;    // the clip time of the frame on the canvas
    this.reducedMotion = matchMedia("(prefers-reduced-motion: reduce)").matches;
    this.addEventListener("pointerdown", (e) => this._down(e));
    this.addEventListener("pointerup", (e) => this._up(e));
    this.addEventListener("pointercancel", () => { this._drag = null; });
    this._motion = (e) => this._shake(e);
  }

  connectedCallback() {
    addEventListener("devicemotion", this._motion);
    const src = this.getAttribute("src");
    if (src && src !== this._src) this._load(src);
  }

  disconnectedCallback() {
    removeEventListener("devicemotion", this._motion);
    this.pause();
  }

  attributeChangedCallback(name, old, value) {
    if (name === "loop") this._loop = value !== "false";
    if (name === "src" && value && value !== this._src && this.isConnected) this._load(value);
  }

  get ready() { return this._ready; }
  get paused() { return this._paused; }
  get loop() { return this._loop; }
  set loop(v) { this._loop = !!v; }
  get duration() { return this.bundle ? this.bundle.duration : 0; }

  get currentTime() { return this._paused ? this._time : this._clock(); }
  set currentTime(t) {
    const v = Math.max(0, Number(t) || 0);
    if (this._paused) { this._time = v; this._draw(this._frameTime(v)); } else { this._time = v; this._wall = performance.now(); }
  }

  play() {
    if (!this._paused || !this._ready || this.still) return;
    this._paused = false;
    this._wall = performance.now();
    const tick = () => {
      if (this._paused) return;
      this._draw(this._clock());
      this._raf = requestAnimationFrame(tick);
    };
    this._raf = requestAnimationFrame(tick);
  }

  pause() {
    if (this._paused) return;
    this._time = this._clock();
    this._paused = true;
    cancelAnimationFrame(this._raf);
    if (this._ready) this._draw(this._frameTime(this._time));
  }

  // A poke at (x, y) along (dx, dy), image pixels, now: the innermost region
  // there gets a kick (as `touch` in a scene). The region's index, or -1.
  poke(x, y, dx, dy) {
    if (!this._ready || this.still) return -1;
    const t = this._paused ? this._frameTime(this._time) : this._clock();
    const hit = this.timeline.poke(x, y, dx, dy, t);
    if (this._paused) this._draw(t);
    return hit;
  }

  // The clock while playing: a loop() scene runs on (its models read the
  // steady state at any time); any other clip starts again at its end (as
  // the GIF does, kicks added live forgotten) or stops there.
  _clock() {
    let t = this._time + (performance.now() - this._wall) / 1000;
    const d = this.bundle.duration;
    if (this.bundle.loop || !(t >= d)) return t;
    if (!this._loop) {
      this._time = this._frameTime(d);
      this._paused = true;
      return this._time;
    }
    t %= d;
    this._time = t;
    this._wall = performance.now();
    this.timeline.forgetLive();
    return t;
  }

  // The time of the render's frame shown at t: frame floor(t·fps).
  _frameTime(t) {
    const b = this.bundle;
    if (!b) return 0;
    const k = Math.min(Math.max(Math.floor(t * b.fps + 1e-9), 0), b.loop ? Infinity : b.frames - 1);
    return k / b.fps;
  }

  async _load(src) {
    this._src = src;
    this._ready = false;
    this.pause();
    try {
      let bundle, base = document.baseURI;
      const inline = src.startsWith("#") && document.getElementById(src.slice(1));
      if (inline) bundle = JSON.parse(inline.textContent);
      else {
        const r = await fetch(src);
        if (!r.ok) throw new Error(`${src}: HTTP ${r.status}`);
        bundle = await r.json();
        base = new URL(src, document.baseURI).href;
      }
      if (bundle.format !== "wobble-run scene" || bundle.version !== 1) throw new Error(`${src}: not a version 1 wobble-run scene bundle`);
      const url = (u) => (u.startsWith("data:") ? u : new URL(u, base).href);
      this.bundle = bundle;
      this.pictureURL = url(bundle.picture);
      this.timeline = new Timeline(bundle);
      this.profiles = new Map();
      this.fieldsSent = new Set();
      let renderer = null;
      try {
        renderer = new Renderer(this.shadowRoot.querySelector("canvas"), GIVEN_SHADERS || (await loadShaders()));
      } catch (e) {
        renderer = null;
      }
      if (!renderer) {
        this._still();
      } else {
        this.renderer = renderer;
        const pic = await decodePixels(this.pictureURL);
        renderer.setImage(pic.width, pic.height, pic.pixels);
        for (const [i, c] of (bundle.cutouts || []).entries()) {
          const [object, plate] = await Promise.all([decodePixels(url(c.object)), decodePixels(url(c.plate))]);
          renderer.addCutout(i + 1, c.box[0], c.box[1], c.box[2], c.box[3], object.pixels, plate.pixels);
        }
        this._draw(this._frameTime(this._time));
      }
      this._ready = true;
      this.dispatchEvent(new Event("ready"));
      if (!this.still && !this.reducedMotion && !this.hasAttribute("paused")) this.play();
    } catch (e) {
      this.dispatchEvent(new CustomEvent("error", { detail: e }));
      throw e;
    }
  }

  // No WebGL2: the still picture in an <img>.
  _still() {
    this.still = true;
    const img = document.createElement("img");
    img.src = this.pictureURL;
    img.alt = this.getAttribute("alt") || "";
    this.shadowRoot.querySelector("canvas, img").replaceWith(img);
  }

  // Draws the scene at clip time t.
  _draw(t) {
    if (!this.renderer) return;
    const b = this.bundle, entries = [];
    for (const r of this.timeline.regions(t)) {
      let p = this.profiles.get(r.index);
      if (!p) {
        p = new Profile(r.model.shape, r.model.spec.pin, b.width, b.height);
        this.profiles.set(r.index, p);
      }
      if (p.empty) continue;
      const blend = p.blend(r.peak);
      if (!blend) continue;
      const id = r.index + 1;
      for (const k of [blend[0], blend[0] + 1]) {
        const key = id + ":" + k;
        if (this.fieldsSent.has(key)) continue;
        this.renderer.addField(id, k, p.x0, p.y0, p.w, p.h, p.field(k));
        this.fieldsSent.add(key);
      }
      const c = r.model.spec.cutout;
      entries.push([id, blend[0], blend[1], r.reading.offset[0], r.reading.offset[1], r.reading.swing,
                    c === null || c === undefined ? 0 : c + 1, ...blend.slice(2)]);
    }
    this.renderer.draw(entries, b.overlap, b.edges);
    this.frameTime = t;
    this.drawnRegions = entries.length;
  }

  // Image pixels under a pointer event.
  _at(e) {
    const el = this.renderer.canvas, r = el.getBoundingClientRect();
    return [(e.clientX - r.left) * el.width / r.width, (e.clientY - r.top) * el.height / r.height];
  }

  _down(e) {
    // iOS asks for motion on a user's gesture: the first tap.
    if (!this._asked && typeof DeviceMotionEvent !== "undefined" && typeof DeviceMotionEvent.requestPermission === "function") {
      this._asked = true;
      DeviceMotionEvent.requestPermission().catch(() => {});
    }
    if (!this._ready || this.still || this.reducedMotion) return;
    this._drag = this._at(e);
    this.setPointerCapture?.(e.pointerId);
  }

  // A drag pokes the region where it began, along the drag (the studio's poke).
  _up(e) {
    if (!this._drag) return;
    const [x0, y0] = this._drag, [x1, y1] = this._at(e);
    this._drag = null;
    if (Math.hypot(x1 - x0, y1 - y0) < 1) return;
    this.lastPoke = this.poke(x0, y0, x1 - x0, y1 - y0);
  }

  // Device motion (m/s², device axes, y up) as an accelerometer sample in g.
  _shake(e) {
    if (!this._ready || this.still || this.reducedMotion) return;
    const a = e.acceleration && e.acceleration.x !== null ? e.acceleration : e.accelerationIncludingGravity;
    if (!a || a.x === null) return;
    const t = this._paused ? this._frameTime(this._time) : this._clock();
    this.lastShake = this.timeline.shake(a.x / G, a.y / G, t);
    if (this._paused) this._draw(t);
  }
}

if (!customElements.get("wobble-view")) customElements.define("wobble-view", WobbleView);
