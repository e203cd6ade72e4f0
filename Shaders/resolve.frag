#version 300 es
// overlap("sum"), second step: over a region's box, sample the source at
// p + the offset summed by wobble.frag (OFFSET_ONLY 1) into u_offset. A
// pixel no region moves has offset 0 there and gets the still image's value.
precision highp float;

uniform highp sampler2D u_source;
// The summed offset per output pixel (source pixels), RG float.
uniform highp sampler2D u_offset;
uniform vec2 u_scale;
uniform vec2 u_invSourceSize;
#include "common.glsl"

out vec4 o_color;

void main() {
    vec2 pixel = outputPixel();
    vec2 offset = texelFetch(u_offset, ivec2(pixel), 0).rg;
    vec2 p = pixel * u_scale + offset;
    o_color = overlaid(sampleSource(p), pixel);
}
