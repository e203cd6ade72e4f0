#version 300 es
// The still image: every output pixel samples the source at its own source
// point (bilinear on premultiplied values; the points lie inside the image,
// so the wrap mode does not matter), as CPURenderer.sample does.
precision highp float;

uniform highp sampler2D u_source;
// Source pixels per output pixel (OutputMapping.scaleX, scaleY).
uniform vec2 u_scale;
// 1 / source size in pixels.
uniform vec2 u_invSourceSize;
#include "common.glsl"

out vec4 o_color;

void main() {
    // The output pixel centre (i + 0.5, j + 0.5).
    vec2 pixel = outputPixel();
    vec2 p = pixel * u_scale;
    o_color = overlaid(sampleSource(p), pixel);
}
