#version 300 es
// One moving region, drawn over the region's box after the still
// image. A fragment outside this region is discarded.
//
// Compiled once per combination of switches that a frame needs (GLProgram
// puts `#define NAME 0|1` lines after #version; GLESRenderer keeps the
// programs): OFFSET_ONLY, CUTOUT (default 0), and common.glsl's OVERLAY,
// MIRROR, INTERIOR and OPAQUE. A switch fixed at compile time takes the
// branch a uniform would have taken, so every value computed is the same;
// the fragments just skip the tests and the code of the other branch.
//
// Two uses (OFFSET_ONLY):
// - direct (0): the fragment samples the source at p + m·swing·direction.
//   Regions are drawn last to first, so where they overlap the first one
//   (in prepare order) wins: overlap("first"), and overlap("sum") when no two
//   regions' boxes meet.
// - offset (1): the fragment writes its offset m·swing·direction (source
//   pixels) into a float target with additive blending, so that overlapping
//   regions sum (overlap("sum")); resolve.frag then samples the source at
//   p + the summed offset.
//
// The displacement magnitude m per output pixel of the region's box is the
// region's static profile (DisplacementProfile: computed on the CPU, in
// doubles, once per shape and peak, the hemisphere or the pinned profile,
// and uploaded as a float texture), 0 where the region does not move the
// pixel; a pixel the CPU reference moves has m > 0 there, however small,
// so which region wins a pixel is the reference's decision, exactly. A
// moving pixel costs one texel fetch, a multiply-add and the bilinear
// sample; the motion (the signed swing and the direction) comes from
// WobbleCore's motion model as uniforms. No loops; nothing that can
// produce NaN.
precision highp float;

uniform highp sampler2D u_source;
// m per output pixel of the box (R32F); 0 where the region does not move
// the pixel.
uniform highp sampler2D u_geometry;
// Output pixel of the geometry's texel (0, 0).
uniform ivec2 u_geometryOrigin;
// The unit direction of the offset (image space).
uniform vec2 u_direction;
// The signed fraction of m the pixel is offset by (RegionFrame.swing).
uniform float u_swing;
// OFFSET_ONLY 1: write the offset (for the sum), 0: sample the source.
#if !defined(OFFSET_ONLY)
#error "wobble.frag is compiled with OFFSET_ONLY defined"
#endif
uniform vec2 u_scale;
uniform vec2 u_invSourceSize;
#include "common.glsl"

// CUTOUT 1: the region is a cutout: instead of the source
// displaced, its object layer displaced (premultiplied, the object's box
// only, transparent outside it) over its plate (straight, the box only;
// the source outside it), as CPURenderer.composite.
#ifndef CUTOUT
#define CUTOUT 0
#endif
#if CUTOUT
uniform highp sampler2D u_object;
uniform highp sampler2D u_plate;
// The layer's box in image pixels: x0, y0, width, height.
uniform ivec4 u_cutoutBox;
// The image's size in pixels (the layer's and the source texture's).
uniform vec2 u_imageSize;

bool inCutoutBox(ivec2 t) {
    ivec2 r = t - u_cutoutBox.xy;
    return r.x >= 0 && r.y >= 0 && r.x < u_cutoutBox.z && r.y < u_cutoutBox.w;
}

vec4 objectTexel(ivec2 t) {
    return inCutoutBox(t) ? texelFetch(u_object, t - u_cutoutBox.xy, 0) : vec4(0.0);
}

// The plate's texel, straight.
vec4 plateTexel(ivec2 t) {
    return inCutoutBox(t) ? texelFetch(u_plate, t - u_cutoutBox.xy, 0) : texelFetch(u_source, t, 0);
}

vec4 premultiplied(vec4 c) {
    return vec4(c.rgb * c.a, c.a);
}

// The object at q (mirrored or clamped into the image, as the source is)
// over the plate at p: object + (1 − object alpha)·plate on premultiplied
// values, divided by the alpha again (where that is under half a level,
// the plate's straight colour).
vec4 cutoutComposite(vec2 p, vec2 q) {
    vec2 s = u_imageSize;
    ivec2 last = ivec2(s) - 1;
    q = vec2(wrapped(q.x, s.x), wrapped(q.y, s.y));
    vec2 f = clamp(q - 0.5, vec2(0.0), s - 1.0);
    ivec2 i0 = ivec2(floor(f));
    ivec2 i1 = min(i0 + 1, last);
    vec2 a = f - vec2(i0);
    vec4 o = mix(mix(objectTexel(i0), objectTexel(ivec2(i1.x, i0.y)), a.x),
                 mix(objectTexel(ivec2(i0.x, i1.y)), objectTexel(i1), a.x), a.y);
    vec2 g = clamp(p - 0.5, vec2(0.0), s - 1.0);
    ivec2 j0 = ivec2(floor(g));
    ivec2 j1 = min(j0 + 1, last);
    vec2 b = g - vec2(j0);
    vec4 c00 = plateTexel(j0), c10 = plateTexel(ivec2(j1.x, j0.y));
    vec4 c01 = plateTexel(ivec2(j0.x, j1.y)), c11 = plateTexel(j1);
    vec4 plate = mix(mix(premultiplied(c00), premultiplied(c10), b.x), mix(premultiplied(c01), premultiplied(c11), b.x), b.y);
    vec4 result = o + (1.0 - o.a) * plate;
    if (result.a >= 0.5 / 255.0) {
        return vec4(result.rgb / result.a, result.a);
    }
    return vec4(mix(mix(c00.rgb, c10.rgb, b.x), mix(c01.rgb, c11.rgb, b.x), b.y), 0.0);
}
#endif

out vec4 o_color;

void main() {
    // The output pixel centre (i + 0.5, j + 0.5).
    vec2 pixel = outputPixel();
    float m = texelFetch(u_geometry, ivec2(pixel) - u_geometryOrigin, 0).r;
    // Not this region's pixel: a region drawn earlier (later in prepare
    // order) or the still image shows through.
    if (!(m > 0.0)) {
        discard;
    }
    vec2 offset = (m * u_swing) * u_direction;
#if OFFSET_ONLY
    o_color = vec4(offset, 0.0, 0.0);
#elif CUTOUT
    vec2 p = pixel * u_scale;
    o_color = overlaid(cutoutComposite(p, p + offset), pixel);
#else
    vec2 p = pixel * u_scale + offset;
    o_color = overlaid(sampleSource(p), pixel);
#endif
}
