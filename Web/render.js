// The preview: WebGL2 running the renderer's own GLSL ES 3.00 files (served
// from the binary at /shaders/NAME, the very text GLESRenderer compiles),
// drawing a frame from the state the engine sent (per region: its shape's
// displacement field for the frame's peak, direction, swing), as
// GLESRenderer draws it:
// 1. the still image (copy.frag, drawn once into a texture), copied in;
// 2. the regions that move (wobble.frag over each region's box), last to
//    first so the first in prepare order wins; with overlap("sum"), regions
//    whose boxes meet add their offsets into a float target first
//    (wobble.frag with OFFSET_ONLY) and resolve.frag samples at the sum;
// 3. the cutout regions over them, last to first, each alone (wobble.frag
//    with CUTOUT): its object layer (premultiplied, the source with the
//    background's share taken out) displaced, over its plate (the source
//    with the object filled from the background), the source outside the
//    layer's box; the layers come as `cutout` messages.

const SHADERS = ["quad.vert", "copy.frag", "wobble.frag", "resolve.frag", "common.glsl"];

export async function loadShaders() {
  const out = {};
  await Promise.all(SHADERS.map(async (name) => {
    const r = await fetch("shaders/" + name, { cache: "no-store" });
    if (!r.ok) throw new Error(`shader ${name}: HTTP ${r.status}`);
    out[name] = await r.text();
  }));
  return out;
}

// The text GLProgram compiles: `#include "NAME"` replaced by the file, then
// a `#define NAME VALUE` line per switch after the #version line.
function prepare(sources, name, defines) {
  const lines = sources[name].split("\n").map((line) => {
    const t = line.trim();
    if (!t.startsWith("#include")) return line;
    const inc = t.slice("#include".length).trim().replace(/"/g, "");
    return sources[inc];
  }).join("\n").split("\n");
  return [lines[0], ...Object.entries(defines).map(([k, v]) => `#define ${k} ${v}`), ...lines.slice(1)].join("\n");
}

export class Renderer {
  constructor(canvas, sources) {
    this.canvas = canvas;
    this.sources = sources;
    this.shapes = new Map();
    // Cutout layers by id: { x0, y0, w, h, object, plate (bytes), textures }.
    this.cutouts = new Map();
    this.width = 0;
    this.height = 0;
    this.edges = "mirror";
    this.context(true);
  }

  // A WebGL2 context on the canvas, opaque (`alpha: false`) unless the
  // image has transparent pixels: the browser then composites the picture
  // without blending it over the page or drawing the checkerboard under it.
  // A context's kind is fixed, so another kind takes a fresh canvas in the
  // same place; the shapes' fields go to it again. The drawing buffer is
  // kept between frames: a frame draws again only the regions' boxes
  // (outside them every frame is the still image).
  context(opaque) {
    if (this.gl) {
      const fresh = this.canvas.cloneNode(false);
      this.canvas.replaceWith(fresh);
      this.canvas = fresh;
    }
    const gl = this.canvas.getContext("webgl2", { antialias: false, premultipliedAlpha: false, alpha: !opaque,
                                                  preserveDrawingBuffer: true, depth: false, stencil: false });
    if (!gl) throw new Error("this browser has no WebGL2");
    this.gl = gl;
    this.opaque = opaque;
    this.programs = new Map();
    this.floatTargets = !!gl.getExtension("EXT_color_buffer_float") && !!gl.getExtension("EXT_float_blend");
    this.vao = gl.createVertexArray();
    this.source = this.still = this.offsets = this.stillFB = this.offsetFB = null;
    for (const g of this.shapes.values()) { g.texture = this.fieldTexture(g.w, g.h); g.uploaded = null; }
    if (this.cutouts) for (const c of this.cutouts.values()) c.textures = null;
    // Whether the next frame copies in the whole still image (a new image
    // or context, a shape forgotten), else only the boxes of the shapes known.
    this.whole = true;
  }

  // A shape's field texture: one float per pixel of its box.
  fieldTexture(w, h) {
    const gl = this.gl;
    const texture = gl.createTexture();
    gl.activeTexture(gl.TEXTURE1);
    gl.bindTexture(gl.TEXTURE_2D, texture);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.NEAREST);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.NEAREST);
    gl.texStorage2D(gl.TEXTURE_2D, 1, gl.R32F, w, h);
    return texture;
  }

  program(frag, defines) {
    const key = frag + JSON.stringify(defines);
    let p = this.programs.get(key);
    if (p) return p;
    const gl = this.gl;
    const compile = (type, name, text) => {
      const s = gl.createShader(type);
      gl.shaderSource(s, text);
      gl.compileShader(s);
      if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(`${name}: ${gl.getShaderInfoLog(s)}`);
      return s;
    };
    const prog = gl.createProgram();
    gl.attachShader(prog, compile(gl.VERTEX_SHADER, "quad.vert", prepare(this.sources, "quad.vert", {})));
    gl.attachShader(prog, compile(gl.FRAGMENT_SHADER, frag, prepare(this.sources, frag, defines)));
    gl.linkProgram(prog);
    if (!gl.getProgramParameter(prog, gl.LINK_STATUS)) throw new Error(`${frag}: ${gl.getProgramInfoLog(prog)}`);
    const loc = {};
    const n = gl.getProgramParameter(prog, gl.ACTIVE_UNIFORMS);
    for (let i = 0; i < n; i++) {
      const u = gl.getActiveUniform(prog, i);
      loc[u.name] = gl.getUniformLocation(prog, u.name);
    }
    p = { prog, loc };
    this.programs.set(key, p);
    return p;
  }

  // Uses `p` for a target of w×h pixels; place = [ax, bx, ay, by] maps its
  // pixels to output pixels (quad.vert).
  use(p, w, h, place) {
    const gl = this.gl;
    gl.useProgram(p.prog);
    const l = p.loc;
    if (l.u_viewport) gl.uniform2f(l.u_viewport, w, h);
    if (l.u_place) gl.uniform4f(l.u_place, ...place);
    if (l.u_scale) gl.uniform2f(l.u_scale, 1, 1);
    if (l.u_invSourceSize) gl.uniform2f(l.u_invSourceSize, 1 / this.width, 1 / this.height);
    if (l.u_source) gl.uniform1i(l.u_source, 0);
    if (l.u_geometry) gl.uniform1i(l.u_geometry, 1);
    if (l.u_offset) gl.uniform1i(l.u_offset, 2);
    if (l.u_overlay) gl.uniform1i(l.u_overlay, 3);
  }

  texture(unit, internal, w, h, format, type, data) {
    const gl = this.gl;
    const t = gl.createTexture();
    gl.activeTexture(gl.TEXTURE0 + unit);
    gl.bindTexture(gl.TEXTURE_2D, t);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.NEAREST);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.NEAREST);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE);
    gl.pixelStorei(gl.UNPACK_ALIGNMENT, 1);
    gl.texImage2D(gl.TEXTURE_2D, 0, internal, w, h, 0, format, type, data);
    return t;
  }

  target(texture) {
    const gl = this.gl;
    const fb = gl.createFramebuffer();
    gl.bindFramebuffer(gl.FRAMEBUFFER, fb);
    gl.framebufferTexture2D(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0, gl.TEXTURE_2D, texture, 0);
    const status = gl.checkFramebufferStatus(gl.FRAMEBUFFER);
    if (status !== gl.FRAMEBUFFER_COMPLETE) throw new Error(`framebuffer incomplete (0x${status.toString(16)})`);
    return fb;
  }

  // The image's pixels (straight RGBA8, rows top to bottom) as the source.
  setImage(width, height, pixels) {
    let opaque = true;
    for (let i = 3; i < pixels.length; i += 4) if (pixels[i] !== 255) { opaque = false; break; }
    if (opaque !== this.opaque) this.context(opaque);
    const gl = this.gl;
    this.width = width;
    this.height = height;
    this.canvas.width = width;
    this.canvas.height = height;
    for (const t of [this.source, this.still, this.offsets]) if (t) gl.deleteTexture(t);
    for (const f of [this.stillFB, this.offsetFB]) if (f) gl.deleteFramebuffer(f);
    this.source = this.texture(0, gl.RGBA8, width, height, gl.RGBA, gl.UNSIGNED_BYTE, pixels);
    this.still = this.texture(4, gl.RGBA8, width, height, gl.RGBA, gl.UNSIGNED_BYTE, null);
    this.stillFB = this.target(this.still);
    this.offsets = null;
    this.offsetFB = null;
    this.whole = true;
    if (this.floatTargets) {
      this.offsets = this.texture(2, gl.RG32F, width, height, gl.RG, gl.FLOAT, null);
      this.offsetFB = this.target(this.offsets);
    }
    // The still image, once: copy.frag over the whole output, row 0 the top.
    gl.bindFramebuffer(gl.FRAMEBUFFER, this.stillFB);
    gl.viewport(0, 0, width, height);
    const p = this.program("copy.frag", { OVERLAY: 0, MIRROR: 1 });
    this.use(p, width, height, [1, 0, 1, 0]);
    gl.activeTexture(gl.TEXTURE0);
    gl.bindTexture(gl.TEXTURE_2D, this.source);
    gl.uniform4f(p.loc.u_rect, 0, 0, width, height);
    gl.bindVertexArray(this.vao);
    gl.drawArrays(gl.TRIANGLE_STRIP, 0, 4);
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
  }

  // One exact displacement field of shape `id` (one float per pixel of its
  // box), for grid peak `k`; null: all zero.
  addField(id, k, x0, y0, w, h, floats) {
    let g = this.shapes.get(id);
    if (!g) {
      g = { texture: this.fieldTexture(w, h), x0, y0, w, h, fields: new Map(), uploaded: null, scratch: null };
      this.shapes.set(id, g);
      this.whole = true;
    }
    g.fields.set(k, floats || new Float32Array(w * h));
  }

  // A cutout layer: its box in image pixels and the object (premultiplied
  // RGBA8) and plate (straight RGBA8) of the box, uploaded when first drawn.
  addCutout(id, x0, y0, w, h, object, plate) {
    const old = this.cutouts.get(id);
    if (old && old.textures) for (const t of old.textures) this.gl.deleteTexture(t);
    this.cutouts.set(id, { x0, y0, w, h, object, plate, textures: null });
  }

  // Forgets the cutout layers whose id is not in `keep`.
  keepCutouts(keep) {
    for (const [id, c] of this.cutouts) {
      if (keep.has(id)) continue;
      if (c.textures) for (const t of c.textures) this.gl.deleteTexture(t);
      this.cutouts.delete(id);
    }
  }

  // Binds cutout `c`'s object and plate (units 5 and 6, as GLESRenderer)
  // and sets `p`'s cutout uniforms.
  bindCutout(p, c) {
    const gl = this.gl;
    if (!c.textures) {
      const w = Math.max(1, c.w), h = Math.max(1, c.h);
      const data = (b) => (b.length >= w * h * 4 ? b : new Uint8Array(w * h * 4));
      c.textures = [this.texture(5, gl.RGBA8, w, h, gl.RGBA, gl.UNSIGNED_BYTE, data(c.object)),
                    this.texture(6, gl.RGBA8, w, h, gl.RGBA, gl.UNSIGNED_BYTE, data(c.plate))];
    }
    gl.activeTexture(gl.TEXTURE5);
    gl.bindTexture(gl.TEXTURE_2D, c.textures[0]);
    gl.activeTexture(gl.TEXTURE6);
    gl.bindTexture(gl.TEXTURE_2D, c.textures[1]);
    gl.uniform1i(p.loc.u_object, 5);
    gl.uniform1i(p.loc.u_plate, 6);
    gl.uniform4i(p.loc.u_cutoutBox, c.x0, c.y0, c.w, c.h);
    gl.uniform2f(p.loc.u_imageSize, this.width, this.height);
  }

  // Forgets the shapes whose id is not in `keep`.
  keepShapes(keep) {
    for (const [id, g] of this.shapes) {
      if (!keep.has(id)) { this.gl.deleteTexture(g.texture); this.shapes.delete(id); this.whole = true; }
    }
  }

  // Makes the shape's texture the field a region entry asks for
  // ([id, k, t, dx, dy, swing, cutout, index, m, ...]), as DisplacementProfile
  // blends it: a + t·(b − a) of the grid fields k and k + 1, then the
  // settled borderline pixels. While those fields are still on their way,
  // the nearest one the page has stands in ("near"). False: none has come yet.
  settle(g, r) {
    const k = r[1];
    let a = g.fields.get(k), b = g.fields.get(k + 1), t = Math.fround(r[2]), key;
    if (a === undefined || b === undefined) {
      let best;
      for (const j of g.fields.keys()) if (best === undefined || Math.abs(j - k) < Math.abs(best - k)) best = j;
      if (best === undefined) return false;
      a = b = g.fields.get(best);
      t = 0;
      key = "~" + best;
    } else {
      key = r.slice(1, 3).concat(r.slice(7)).join(",");
    }
    const exact = key[0] === "~" ? "near" : "exact";
    if (key === g.uploaded) return exact;
    const n = g.w * g.h;
    let out = a;
    if ((t !== 0 && a !== b) || r.length > 7) {
      if (!g.scratch) g.scratch = new Float32Array(n);
      out = g.scratch;
      for (let i = 0; i < n; i++) out[i] = a[i] + t * (b[i] - a[i]);
      if (key[0] !== "~") for (let i = 7; i + 1 < r.length; i += 2) out[r[i]] = r[i + 1];
    }
    const gl = this.gl;
    gl.activeTexture(gl.TEXTURE1);
    gl.bindTexture(gl.TEXTURE_2D, g.texture);
    gl.pixelStorei(gl.UNPACK_ALIGNMENT, 4);
    gl.texSubImage2D(gl.TEXTURE_2D, 0, 0, 0, g.w, g.h, gl.RED, gl.FLOAT, out);
    g.uploaded = key;
    return exact;
  }

  // Draws one frame: `regions` is the scene message's list for the frame
  // ([id, k, t, dx, dy, swing, cutout, ...]); `overlap` and `edges` the scene's.
  // Whether every region was drawn with its own field (not a stand-in).
  draw(regions, overlap, edges) {
    const gl = this.gl;
    const W = this.width, H = this.height;
    if (!this.source) return;
    // The canvas: row 0 at the bottom, so output = (x, H − y).
    const place = [1, 0, -1, H];
    // The still image where this frame draws (row 0 of the still is the
    // top): everywhere after a new image or a shape forgotten, else in the
    // box of every shape known (a region drawn last frame, or about to be).
    gl.bindFramebuffer(gl.READ_FRAMEBUFFER, this.stillFB);
    gl.bindFramebuffer(gl.DRAW_FRAMEBUFFER, null);
    if (this.whole) {
      gl.blitFramebuffer(0, 0, W, H, 0, H, W, 0, gl.COLOR_BUFFER_BIT, gl.NEAREST);
      this.whole = false;
    } else {
      for (const g of this.shapes.values()) {
        const x1 = g.x0 + g.w, y1 = g.y0 + g.h;
        gl.blitFramebuffer(g.x0, g.y0, x1, y1, g.x0, H - g.y0, x1, H - y1, gl.COLOR_BUFFER_BIT, gl.NEAREST);
      }
    }
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
    gl.viewport(0, 0, W, H);
    gl.bindVertexArray(this.vao);
    gl.activeTexture(gl.TEXTURE0);
    gl.bindTexture(gl.TEXTURE_2D, this.source);
    const mirror = edges === "clamp" ? 0 : 1;
    const draws = [], cutouts = [];
    let exact = true;
    for (const r of regions) {
      const g = this.shapes.get(r[0]);
      const s = g ? this.settle(g, r) : false;
      // A cutout whose layers have not come yet is drawn as a plain region.
      const c = r[6] ? this.cutouts.get(r[6]) : undefined;
      if (r[6] && !c) exact = false;
      if (s) (c ? cutouts : draws).push({ g, r, c });
      if (s !== "exact") exact = false;
    }
    let direct = draws;
    if (overlap === "sum" && draws.length > 1) {
      const meets = draws.map(() => false);
      for (let i = 0; i < draws.length; i++) {
        for (let j = i + 1; j < draws.length; j++) {
          const a = draws[i].g, b = draws[j].g;
          if (a.x0 < b.x0 + b.w && b.x0 < a.x0 + a.w && a.y0 < b.y0 + b.h && b.y0 < a.y0 + a.h) meets[i] = meets[j] = true;
        }
      }
      const summed = draws.filter((_, i) => meets[i]);
      direct = draws.filter((_, i) => !meets[i]);
      if (summed.length) this.drawSummed(summed, mirror, place);
    }
    for (let i = direct.length - 1; i >= 0; i--) {
      this.drawRegion(direct[i], { OFFSET_ONLY: 0, MIRROR: mirror }, W, H, place);
    }
    // Cutouts over the other regions, each with its own offset: the first
    // cutout that moves a pixel draws it (as the renderers).
    for (let i = cutouts.length - 1; i >= 0; i--) {
      this.drawRegion(cutouts[i], { OFFSET_ONLY: 0, MIRROR: mirror, CUTOUT: 1 }, W, H, place);
    }
    gl.activeTexture(gl.TEXTURE0);
    return exact;
  }

  drawRegion(d, switches, w, h, place) {
    const gl = this.gl;
    const [, , , dx, dy, swing] = d.r;
    const p = this.program("wobble.frag", { OVERLAY: 0, INTERIOR: 0, OPAQUE: 0, ...switches });
    this.use(p, w, h, place);
    if (d.c) this.bindCutout(p, d.c);
    const g = d.g;
    gl.activeTexture(gl.TEXTURE1);
    gl.bindTexture(gl.TEXTURE_2D, g.texture);
    gl.uniform4f(p.loc.u_rect, g.x0, g.y0, g.x0 + g.w, g.y0 + g.h);
    gl.uniform2i(p.loc.u_geometryOrigin, g.x0, g.y0);
    gl.uniform2f(p.loc.u_direction, dx, dy);
    gl.uniform1f(p.loc.u_swing, swing);
    gl.drawArrays(gl.TRIANGLE_STRIP, 0, 4);
  }

  drawSummed(draws, mirror, place) {
    const gl = this.gl;
    const W = this.width, H = this.height;
    if (!this.offsetFB) {
      // No float target here: first wins instead (said once on the page).
      this.noSum = true;
      for (let i = draws.length - 1; i >= 0; i--) this.drawRegion(draws[i], { OFFSET_ONLY: 0, MIRROR: mirror }, W, H, place);
      return;
    }
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (const d of draws) {
      x0 = Math.min(x0, d.g.x0); y0 = Math.min(y0, d.g.y0);
      x1 = Math.max(x1, d.g.x0 + d.g.w); y1 = Math.max(y1, d.g.y0 + d.g.h);
    }
    gl.bindFramebuffer(gl.FRAMEBUFFER, this.offsetFB);
    gl.viewport(0, 0, W, H);
    gl.enable(gl.SCISSOR_TEST);
    gl.scissor(x0, y0, x1 - x0, y1 - y0);
    gl.clearColor(0, 0, 0, 0);
    gl.clear(gl.COLOR_BUFFER_BIT);
    gl.disable(gl.SCISSOR_TEST);
    gl.enable(gl.BLEND);
    gl.blendEquation(gl.FUNC_ADD);
    gl.blendFunc(gl.ONE, gl.ONE);
    gl.activeTexture(gl.TEXTURE2);
    gl.bindTexture(gl.TEXTURE_2D, null);
    for (const d of draws) this.drawRegion(d, { OFFSET_ONLY: 1, MIRROR: 0 }, W, H, [1, 0, 1, 0]);
    gl.disable(gl.BLEND);
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
    gl.viewport(0, 0, W, H);
    const p = this.program("resolve.frag", { OVERLAY: 0, MIRROR: mirror });
    this.use(p, W, H, place);
    gl.activeTexture(gl.TEXTURE2);
    gl.bindTexture(gl.TEXTURE_2D, this.offsets);
    for (const d of draws) {
      gl.uniform4f(p.loc.u_rect, d.g.x0, d.g.y0, d.g.x0 + d.g.w, d.g.y0 + d.g.h);
      gl.drawArrays(gl.TRIANGLE_STRIP, 0, 4);
    }
    gl.activeTexture(gl.TEXTURE2);
    gl.bindTexture(gl.TEXTURE_2D, null);
  }
}
