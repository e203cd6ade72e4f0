// The engine's motion and shape arithmetic in the page (the web player,
// <wobble-view>), line for line the Swift of WobbleCore and WobbleRender so
// that a scene bundle plays as the headless render and a live poke moves as
// the engine would move a kick at that time:
// - the motion models' closed forms: classic (ClassicMotion.swift), spring
//   (SpringMotion.swift), their steady states in a loop (LoopMotion.swift);
// - a region's shape (RegionShape.swift, Pin.swift) and its displacement
//   profile on the grid of peaks (RegionGeometry.swift,
//   DisplacementProfile.swift, ShapeProfile in ShaderData.swift).
// Every number is a double as in Swift; fields are floats as the renderers
// store them. WebPlayerTests checks this file against the Swift models on a
// table of kicks (WebPlayerTests.table).

export const EPS = 1e-9;

// ---- Classic (the original's cycles) -------------------------------------

export function cycleProgress(tau, d) {
  if (!(d > 0) || !Number.isFinite(tau)) return 0;
  const tc = Math.min(Math.max(tau, 0), d);
  let u = (2 * tc) % d;
  if (u < 0) u += d;
  const x = (u > d / 2 ? d - u : u) / (d / 2);
  return (tc < d / 2 ? -1 : 1) * (2 * x - x * x);
}

// The amplitude after at most n cycle ends (Impulse.decay).
function decayed(amplitude, n, p) {
  let amp = amplitude, cycle = 0;
  while (cycle < n && amp > 0 && cycle < 4000) {
    amp *= p.decay;
    if (amp < p.threshold) amp = 0;
    cycle += 1;
  }
  if (!(cycle < n && amp > 0 && p.decay > 0 && p.decay < 1)) return [amp, cycle];
  const left = n - cycle;
  const toZero = p.threshold > 0 ? Math.min(Math.floor(Math.log(p.threshold / amp) / Math.log(p.decay)) + 1, 1e15) : Infinity;
  if (left >= toZero) return [0, cycle + Math.max(toZero, 1)];
  amp *= Math.pow(p.decay, left);
  if (amp < p.threshold || !(amp > 0)) amp = 0;
  return [amp, cycle + left];
}

function still(direction) {
  return { amplitude: 0, direction, level: 0, swing: 0, offset: direction };
}

class Classic {
  constructor(p) { this.p = p; }
  // Impulse.state
  state(k, t) {
    const p = this.p, d = p.duration;
    const elapsed = Math.max(0, t - k.start);
    const raw = Math.floor((elapsed + EPS) / d);
    const n = Number.isFinite(raw) ? Math.min(raw, 1e15) : 1e15;
    let amp = k.amplitude, cycle = n;
    if (p.decay !== 1) [amp, cycle] = decayed(k.amplitude, n, p);
    const begin = k.start + cycle * d;
    return { amplitude: amp, cycleStart: begin, tau: amp > 0 ? Math.max(0, t - begin) : 0 };
  }
  adding(kick) { return [kick]; }
  reading(kicks, t) {
    const k = kicks[kicks.length - 1];
    if (!k) return still([0, 0]);
    const st = this.state(k, t);
    if (!(st.amplitude > 0)) return still(k.direction);
    return { amplitude: st.amplitude, direction: k.direction, level: st.amplitude,
             swing: cycleProgress(st.tau, this.p.duration), offset: k.direction };
  }
  restTime(kicks) {
    const k = kicks[kicks.length - 1];
    if (!k) return -Infinity;
    const p = this.p;
    if (!(k.amplitude > 0)) return k.start;
    if (p.decay >= 1 || p.threshold <= 0) return Infinity;
    return k.start + decayed(k.amplitude, 1e15, p)[1] * p.duration;
  }
  // ClassicLoop: the last kick at or before t among the repeated ones.
  looped(period, kicks) {
    return (t, taus) => {
      let last = 0;
      for (let i = 0; i < kicks.length; i++) if (taus[i] <= taus[last]) last = i;
      const k = kicks[last];
      return this.reading([{ start: t - taus[last], direction: k.direction, amplitude: k.amplitude }], t);
    };
  }
}

// ---- Spring ---------------------------------------------------------------

class Spring {
  constructor(p) {
    this.p = p;
    const z = p.damping, omega = 2 * Math.PI / p.duration, root = Math.sqrt(1 - z * z);
    this.rate = z * omega;
    this.wd = omega * root;
    this.tPeak = Math.atan2(root, z) / this.wd;
    this.c = root * Math.exp(-this.rate * this.tPeak);
  }
  response(tau) { return tau > 0 ? Math.exp(-this.rate * tau) * Math.sin(this.wd * tau) / this.c : 0; }
  envelope(kicks, t) {
    let e = 0;
    for (const k of kicks) if (k.start <= t + EPS) e += k.amplitude * Math.exp(-this.rate * Math.max(0, t - k.start));
    return e / this.c;
  }
  swingOf(kicks, t) {
    let x = 0, y = 0;
    for (const k of kicks) {
      if (k.start > t + EPS) continue;
      const s = k.amplitude * this.response(t - k.start);
      x += k.direction[0] * s;
      y += k.direction[1] * s;
    }
    return [x, y];
  }
  adding(kick, kicks) {
    const last = kicks[kicks.length - 1];
    if (!last || !(this.restTime(kicks) > kick.start + EPS)) return [kick];
    const out = kicks.slice();
    if (Math.abs(last.start - kick.start) <= EPS) {
      const a = last.amplitude + kick.amplitude;
      const vx = last.direction[0] * last.amplitude + kick.direction[0] * kick.amplitude;
      const vy = last.direction[1] * last.amplitude + kick.direction[1] * kick.amplitude;
      out[out.length - 1] = { start: last.start, direction: a > 0 ? [vx / a, vy / a] : [0, 0], amplitude: a };
    } else {
      out.push(kick);
    }
    return out;
  }
  reading(kicks, t) {
    if (!kicks.length) return still([0, 0]);
    if (!(t < this.restTime(kicks) - EPS)) return still([0, 0]);
    return this.read(this.envelope(kicks, t), this.swingOf(kicks, t));
  }
  read(e, s) {
    const len = Math.sqrt(s[0] * s[0] + s[1] * s[1]);
    if (!(e > 0 && len > 0 && Number.isFinite(len))) return { amplitude: e, direction: [0, 0], level: 0, swing: 0, offset: [0, 0] };
    const unit = [s[0] / len, s[1] / len];
    return { amplitude: e, direction: unit, level: Math.min(e, 4), swing: -Math.min(len / e, 1), offset: unit };
  }
  restTime(kicks) {
    const last = kicks[kicks.length - 1];
    if (!last) return -Infinity;
    const e = this.envelope(kicks, last.start), threshold = this.p.threshold;
    if (!(e >= threshold && e > 0)) return last.start;
    if (!(threshold > 0 && this.rate > 0)) return Infinity;
    const t = last.start + Math.log(e / threshold) / this.rate;
    return Number.isNaN(t) ? Infinity : t;
  }
  // SpringLoop: the sums over the repetitions as geometric series.
  looped(period, kicks) {
    const q = Math.exp(-this.rate * period);
    const zr = 1 - q * Math.cos(this.wd * period), zi = -q * Math.sin(this.wd * period);
    const norm = zr * zr + zi * zi, ir = zr / norm, ii = -zi / norm;
    return (t, taus) => {
      let x = 0, y = 0, e = 0;
      for (let i = 0; i < kicks.length; i++) {
        const k = kicks[i], decay = Math.exp(-this.rate * taus[i]);
        const wr = decay * Math.cos(this.wd * taus[i]), wi = decay * Math.sin(this.wd * taus[i]);
        const g = (wr * ii + wi * ir) / this.c;
        x += k.direction[0] * (k.amplitude * g);
        y += k.direction[1] * (k.amplitude * g);
        e += k.amplitude * decay;
      }
      e /= this.c * (1 - q);
      return this.read(e, [x, y]);
    };
  }
}

export const MODELS = { classic: Classic, spring: Spring };

export function makeModel(params) {
  const M = MODELS[params.motion];
  if (!M) throw new Error(`motion model '${params.motion}' is not known to this player`);
  return new M(params);
}

// LoopedMotion.reading: any clip time, reduced modulo the period.
export function loopReading(steady, kicks, period, t) {
  if (!kicks.length) return still([0, 0]);
  let u = t % period;
  if (u < 0) u += period;
  if (u > period - EPS) u = 0;
  const taus = kicks.map((k) => Math.max(0, u - k.start + (k.start <= u + EPS ? 0 : period)));
  return steady(u, taus);
}

// ---- Shapes ---------------------------------------------------------------

const mid = (a, b) => [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2];
const cross = (a, b) => a[0] * b[1] - a[1] * b[0];

// A region: corners lt, rt, rb, lb and its center (RegionShape).
export class Shape {
  constructor([lt, rt, rb, lb, center]) {
    Object.assign(this, { lt, rt, rb, lb, center });
    const mL = mid(lt, lb), mT = mid(lt, rt), mR = mid(rt, rb), mB = mid(rb, lb);
    this.curves = [[mL, lt, mT], [mT, rt, mR], [mR, rb, mB], [mB, lb, mL]];
    this.coef = this.curves.map(([p0, p1, p2]) => ({
      a: [p0[0] - p1[0] * 2 + p2[0], p0[1] - p1[1] * 2 + p2[1]],
      b: [(p1[0] - p0[0]) * 2, (p1[1] - p0[1]) * 2],
      c: [p0[0] - center[0], p0[1] - center[1]],
    }));
    const xs = [lt[0], rt[0], rb[0], lb[0]], ys = [lt[1], rt[1], rb[1], lb[1]];
    this.bbox = { minX: Math.min(...xs), minY: Math.min(...ys), maxX: Math.max(...xs), maxY: Math.max(...ys) };
    this.canMove = this.movable();
  }

  get cornerArea() {
    const { lt, rt, rb, lb } = this;
    return Math.abs(0.5 * (cross(lt, rt) + cross(rt, rb) + cross(rb, lb) + cross(lb, lt)));
  }

  movable() {
    const { lt, rt, rb, lb, center, bbox } = this;
    if (![lt, rt, rb, lb, center].every((p) => Number.isFinite(p[0]) && Number.isFinite(p[1]))) return false;
    const w = bbox.maxX - bbox.minX, h = bbox.maxY - bbox.minY;
    if (!(w > 1e-9 && h > 1e-9)) return false;
    if (!(this.cornerArea > 1e-9)) return false;
    const n = 64, poly = [];
    for (const [p0, p1, p2] of this.curves) {
      for (let i = 0; i < n; i++) {
        const t = i / n, u = 1 - t;
        poly.push([p0[0] * (u * u) + p1[0] * (2 * t * u) + p2[0] * (t * t), p0[1] * (u * u) + p1[1] * (2 * t * u) + p2[1] * (t * t)]);
      }
    }
    let winding = 0, minDist = Infinity;
    for (let i = 0; i < poly.length; i++) {
      const a = [poly[i][0] - center[0], poly[i][1] - center[1]];
      const q = poly[(i + 1) % poly.length], b = [q[0] - center[0], q[1] - center[1]];
      winding += Math.atan2(cross(a, b), a[0] * b[0] + a[1] * b[1]);
      const seg = [b[0] - a[0], b[1] - a[1]], len2 = seg[0] * seg[0] + seg[1] * seg[1];
      const t = len2 > 0 ? Math.min(Math.max(-(a[0] * seg[0] + a[1] * seg[1]) / len2, 0), 1) : 0;
      minDist = Math.min(minDist, Math.hypot(a[0] + seg[0] * t, a[1] + seg[1] * t));
    }
    return Math.abs(winding) > Math.PI && minDist > 1e-6 * Math.max(Math.max(w, h), 1);
  }

  boundaryDistance(ux, uy) {
    let best = Infinity;
    const u = [ux, uy];
    for (const { a, b, c } of this.coef) {
      const qa = cross(a, u), qb = cross(b, u), qc = cross(c, u);
      let r0 = NaN, r1 = NaN;
      const scale = Math.max(Math.abs(qb), Math.abs(qc), 1e-300);
      if (Math.abs(qa) <= 1e-12 * scale) {
        if (qb !== 0) r0 = -qc / qb;
      } else {
        const disc = qb * qb - 4 * qa * qc;
        if (disc >= 0) {
          const sq = Math.sqrt(disc);
          const q = -0.5 * (qb + (qb >= 0 ? sq : -sq));
          r0 = q / qa;
          r1 = q !== 0 ? qc / q : -qb / qa;
        }
      }
      for (const t of [r0, r1]) {
        if (!(Number.isFinite(t) && t >= -1e-9 && t <= 1 + 1e-9)) continue;
        const tc = Math.min(Math.max(t, 0), 1);
        const vx = a[0] * (tc * tc) + b[0] * tc + c[0], vy = a[1] * (tc * tc) + b[1] * tc + c[1];
        const along = vx * ux + vy * uy;
        if (along > 0 && along < best) best = along;
      }
    }
    return Number.isFinite(best) ? best : null;
  }

  // [d, R] at p, or null (RegionShape.polar).
  polar(x, y) {
    if (!this.canMove) return null;
    const vx = x - this.center[0], vy = y - this.center[1];
    const d = Math.sqrt(vx * vx + vy * vy);
    if (d === 0) return [0, 0];
    const r = this.boundaryDistance(vx / d, vy / d);
    return r === null ? null : [d, r];
  }

  contains(x, y) {
    if (!this.canMove || !Number.isFinite(x) || !Number.isFinite(y)) return false;
    const p = this.polar(x, y);
    return p !== null && p[0] <= p[1];
  }

  // The unit axis from the pinned side's midpoint to the opposite one.
  pinAxis(side) {
    const [root, far] = { bottom: [mid(this.rb, this.lb), mid(this.lt, this.rt)], top: [mid(this.lt, this.rt), mid(this.rb, this.lb)],
                          left: [mid(this.lt, this.lb), mid(this.rt, this.rb)], right: [mid(this.rt, this.rb), mid(this.lt, this.lb)] }[side];
    const vx = far[0] - root[0], vy = far[1] - root[1], len = Math.sqrt(vx * vx + vy * vy);
    return len > 0 && Number.isFinite(len) ? [vx / len, vy / len] : null;
  }
}

// The innermost shape containing (x, y) (RegionShape.innermost), or -1.
export function innermost(shapes, x, y) {
  let best = -1, area = Infinity;
  shapes.forEach((s, i) => {
    if (!s.contains(x, y)) return;
    const a = s.cornerArea;
    if (best < 0 || a < area) { best = i; area = a; }
  });
  return best;
}

export function hemisphere(d, r, peak) {
  const mm = Math.min(peak, r);
  const thetaC = Math.acos(Math.min(Math.max(mm / r, 0), 1));
  const theta = Math.acos(Math.min(Math.max(d / r, 0), 1));
  return Math.max(0, r * (Math.cos(theta * thetaC / (Math.PI / 2)) - Math.cos(theta)));
}

export function pinned(rho, sigma, r, peak) {
  const mm = r > 0 ? Math.min(peak, r) : peak;
  const h = (1 + Math.min(Math.max(sigma, -1), 1)) / 2;
  const rr = Math.min(Math.max(rho, 0), 1);
  return Math.max(0, mm * (1 - rr * rr) * h * h * h / 0.32768);
}

const encode = (m) => (m > 0 ? Math.max(Math.fround(m), 1.401298464324817e-45) : 0);

// The grid of peaks: 2^(k/8)/256 px for k >= 1, 0 for k = 0.
export const gridPeak = (k) => (k <= 0 ? 0 : Math.pow(2, k / 8) / 256);
export function gridIndex(peak) {
  if (!(peak >= gridPeak(1))) return 0;
  let k = Math.max(1, Math.floor(Math.log2(peak * 256) * 8));
  while (gridPeak(k + 1) <= peak) k += 1;
  while (k > 1 && gridPeak(k) > peak) k -= 1;
  return k;
}

// A shape's displacement profile on the image's own pixels (RegionGeometry
// + ShapeProfile): the box of pixels it moves, d/R, R, θ, σ per pixel, the
// borderline pixels, and the exact field of grid peak k on demand.
export class Profile {
  constructor(shape, pin, width, height) {
    this.shape = shape;
    this.pin = pin || null;
    this.fields = new Map();
    this.empty = true;
    const b = shape.bbox;
    const axis = this.pin ? shape.pinAxis(this.pin) : null;
    const clampI = (v, hi) => Math.min(Math.max(v, -1), hi);
    const i0 = Math.max(0, clampI(Math.floor(b.minX - 0.5), width)), i1 = Math.min(width - 1, clampI(Math.ceil(b.maxX - 0.5), width));
    const j0 = Math.max(0, clampI(Math.floor(b.minY - 0.5), height)), j1 = Math.min(height - 1, clampI(Math.ceil(b.maxY - 0.5), height));
    if (!shape.canMove || i0 > i1 || j0 > j1 || (this.pin && !axis)) return;
    const w = i1 - i0 + 1, h = j1 - j0 + 1;
    const full = new Float32Array(w * h * 4), edges = [];
    let minI = w, maxI = -1, minJ = h, maxJ = -1;
    for (let j = 0; j < h; j++) {
      for (let i = 0; i < w; i++) {
        const x = i0 + i + 0.5, y = j0 + j + 0.5;
        if (!(x >= b.minX && x <= b.maxX && y >= b.minY && y <= b.maxY)) continue;
        const pr = shape.polar(x, y);
        if (!pr) continue;
        const [d, r] = pr, o = (j * w + i) * 4;
        if (d === 0) { full[o] = 0; full[o + 1] = 1; full[o + 2] = Math.PI / 2; }
        else if (r > 0 && d < r) {
          full[o] = Math.max(Math.fround(d / r), 1.1754943508222875e-38);
          full[o + 1] = r;
          full[o + 2] = Math.acos(Math.min(Math.max(d / r, 0), 1));
        } else continue;
        if (axis) full[o + 3] = r > 0 ? Math.min(Math.max(((x - shape.center[0]) * axis[0] + (y - shape.center[1]) * axis[1]) / r, -1), 1) : 0;
        if (d > 0 && r - d <= 1e-6 * r) edges.push([i, j, d, r]);
        minI = Math.min(minI, i); maxI = Math.max(maxI, i); minJ = Math.min(minJ, j); maxJ = Math.max(maxJ, j);
      }
    }
    if (minI > maxI) return;
    const cw = maxI - minI + 1, ch = maxJ - minJ + 1;
    this.values = new Float32Array(cw * ch * 4);
    for (let j = 0; j < ch; j++) this.values.set(full.subarray(((j + minJ) * w + minI) * 4, ((j + minJ) * w + maxI + 1) * 4), j * cw * 4);
    this.borderline = edges.map(([i, j, d, r]) => ({ index: (j - minJ) * cw + (i - minI), d, r }));
    Object.assign(this, { x0: i0 + minI, y0: j0 + minJ, w: cw, h: ch, empty: false });
  }

  // m of a borderline pixel for peak (0 where the reference does not move it).
  settled(e, peak) {
    if (!(peak > 0)) return 0;
    if (this.pin) {
      const m = pinned(e.d / e.r, this.values[e.index * 4 + 3], e.r, peak);
      return encode(m);
    }
    return encode(hemisphere(e.d, e.r, peak));
  }

  // The exact field of grid peak k (DisplacementProfile.field).
  field(k) {
    let f = this.fields.get(k);
    if (f) return f;
    const peak = gridPeak(k), v = this.values, n = this.w * this.h;
    f = new Float32Array(n);
    if (peak > 0) {
      for (let i = 0; i < n; i++) {
        const ratio = v[i * 4], r = v[i * 4 + 1];
        if (!(r > 0)) continue;
        let m;
        if (this.pin) m = ratio === 0 ? pinned(0, 0, 0, peak) : pinned(ratio, v[i * 4 + 3], r, peak);
        else if (ratio === 0) m = peak;
        else {
          const thetaC = Math.acos(Math.min(Math.max(Math.min(peak, r) / r, 0), 1));
          m = Math.max(0, r * (Math.cos(v[i * 4 + 2] * thetaC / (Math.PI / 2)) - ratio));
        }
        f[i] = encode(m);
      }
      for (const e of this.borderline) f[e.index] = this.settled(e, peak);
    }
    this.fields.set(k, f);
    return f;
  }

  // How a frame with peak `peak` reads the grid: [k, t, settled...] as the
  // studio's region entries carry it (ShapeProfile.blend), or null.
  blend(peak) {
    if (!(peak > 0 && Number.isFinite(peak))) return null;
    const k = gridIndex(peak), lo = gridPeak(k), hi = gridPeak(k + 1);
    const t = Math.fround((peak - lo) / (hi - lo));
    const out = [k, t];
    if (this.borderline.length) {
      const a = this.field(k), b = this.field(k + 1);
      for (const e of this.borderline) {
        const blended = Math.fround(a[e.index] + Math.fround(t * Math.fround(b[e.index] - a[e.index])));
        const m = this.settled(e, peak);
        if (m !== blended) out.push(e.index, m);
      }
    }
    return out;
  }
}

// ---- A scene bundle's timeline --------------------------------------------

// The kick [t, dx, dy, a] of a bundle as the models take it.
const kickOf = (k) => ({ start: k[0], direction: [k[1], k[2]], amplitude: k[3] });

// What every region reads at clip time t, given the bundle and the kicks
// added live ({model, kick}); the regions in prepare order:
// [{ index, shape, params, reading, peak }] (those that move a pixel).
export class Timeline {
  constructor(bundle) {
    this.bundle = bundle;
    this.models = bundle.models.map((m) => {
      const params = { motion: m.motion, ...m.parameters };
      const model = makeModel(params);
      const kicks = m.kicks.map(kickOf);
      const out = { spec: m, params, model, shape: new Shape(m.shape), kicks, live: [] };
      if (bundle.loop) out.steady = model.looped(bundle.loop.period, kicks);
      return out;
    });
    this.moments = bundle.moments;
  }

  // The models live at t (indices, prepare order).
  liveAt(t) {
    let live = [];
    for (const [time, list] of this.moments) { if (time <= t + EPS) live = list; else break; }
    return live;
  }

  // The kick history of model m at t: its kicks (scripted and live) folded
  // through the model's `adding`, in time order.
  history(m, t) {
    const all = m.live.length ? m.kicks.concat(m.live).sort((a, b) => a.start - b.start) : m.kicks;
    let h = [];
    for (const k of all) { if (k.start <= t + EPS) h = m.model.adding(k, h); else break; }
    return h;
  }

  reading(m, t) {
    if (!this.bundle.loop) return m.model.reading(this.history(m, t), t);
    const loop = this.bundle.loop;
    const base = loopReading(m.steady, m.kicks, loop.period, t);
    const live = m.live.filter((k) => k.start <= t + EPS);
    if (!live.length) return base;
    // A live poke in a loop acts once, on top of the steady state: a
    // spring adds its response; a classic cycle takes over while it moves.
    if (m.model instanceof Spring) {
      if (!(t < m.model.restTime(live) - EPS)) return base;
      const s0 = m.model.swingOf(live, t), e0 = m.model.envelope(live, t);
      const bs = [base.offset[0] * -base.swing * base.amplitude, base.offset[1] * -base.swing * base.amplitude];
      return m.model.read(base.amplitude + e0, [bs[0] + s0[0], bs[1] + s0[1]]);
    }
    const r = m.model.reading([live[live.length - 1]], t);
    return r.level > 0 ? r : base;
  }

  // The regions that move at t.
  regions(t) {
    const out = [];
    for (const i of this.liveAt(t)) {
      const m = this.models[i];
      if (!m.shape.canMove) continue;
      if (!this.bundle.loop && !m.kicks.length && !m.live.length) continue;
      const r = this.reading(m, t);
      const b = m.shape.bbox;
      const peak = m.params.strength * Math.min(b.maxX - b.minX, b.maxY - b.minY) * r.level;
      if (!(peak > 0) || r.swing === 0 || !Number.isFinite(peak)) continue;
      out.push({ index: i, model: m, reading: r, peak });
    }
    return out;
  }

  // A poke: the innermost live model under (x, y) gets a kick along
  // (dx, dy) of amplitude 1 at t (Scene.touch). Its index, or -1.
  poke(x, y, dx, dy, t) {
    const live = this.liveAt(t);
    const hit = innermost(live.map((i) => this.models[i].shape), x, y);
    const dir = normalize(dx, dy);
    if (hit < 0 || !dir) return -1;
    this.models[live[hit]].live.push({ start: t, direction: dir, amplitude: 1 });
    return live[hit];
  }

  // A shake (g, device axes, y up): every live model below the gate gets a
  // kick along (ax, −ay) (Scene.shake); how many moved.
  shake(ax, ay, t) {
    const dir = normalize(ax, -ay);
    if (!(Math.sqrt(ax * ax + ay * ay) > 1) || !dir) return 0;
    let n = 0;
    for (const i of this.liveAt(t)) {
      const m = this.models[i];
      if (this.reading(m, t).amplitude < 0.3) { m.live.push({ start: t, direction: dir, amplitude: 1 }); n++; }
    }
    return n;
  }

  forgetLive() { for (const m of this.models) m.live = []; }
}

// Scene.normalize
export function normalize(dx, dy) {
  const s = Math.max(Math.abs(dx), Math.abs(dy));
  if (!(s > 0 && Number.isFinite(s))) return null;
  const x = dx / s, y = dy / s, len = Math.sqrt(x * x + y * y);
  return [x / len, y / len];
}
