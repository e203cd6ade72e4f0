#version 300 es
// One moving region's quad (as quad.vert: a rectangle in framebuffer pixels,
// a 4-vertex triangle strip picked by gl_VertexID), plus the region's cycle
// progress of SPEC §5, which is the same for every fragment of the draw and
// so is evaluated here, once per vertex, and handed on flat.
precision highp float;

// (x0, y0, x1, y1): the rectangle in framebuffer pixels.
uniform vec4 u_rect;
// The viewport size in pixels.
uniform vec2 u_viewport;
// τ: seconds since the region's current cycle began.
uniform float u_tau;
// D: the cycle duration in seconds.
uniform float u_duration;

// progress in [-1, 1].
flat out float v_progress;

// SPEC §5: u = mod(2τ, D), x = (u > D/2 ? D − u : u) / (D/2),
// s = (τ < D/2 ? −1 : +1), progress = s·(2x − x²). τ is clamped to [0, D]
// and u to [0, D] (mod may round either way at τ = D/2 and τ = D, where the
// progress is 0): no division by zero, nothing that can produce NaN.
float cycleProgress(float tau, float d) {
    if (!(d > 0.0)) {
        return 0.0;
    }
    float t = clamp(tau, 0.0, d);
    float halfD = 0.5 * d;
    float u = clamp(mod(2.0 * t, d), 0.0, d);
    float x = clamp((u > halfD ? d - u : u) / halfD, 0.0, 1.0);
    float s = t < halfD ? -1.0 : 1.0;
    return s * (2.0 * x - x * x);
}

void main() {
    vec2 corner = vec2(float(gl_VertexID & 1), float(gl_VertexID >> 1));
    vec2 pixel = mix(u_rect.xy, u_rect.zw, corner);
    gl_Position = vec4(pixel / u_viewport * 2.0 - 1.0, 0.0, 1.0);
    v_progress = cycleProgress(u_tau, u_duration);
}
