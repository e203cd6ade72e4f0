#version 300 es
// A smaller output where regions move: each output pixel is the wobbled
// full-size frame (u_frame, drawn by wobble.frag at the image's own size)
// area-averaged over the pixel's footprint, on premultiplied values, as
// AreaFilter.averagePixel does: the wobbled result is filtered, not the
// image before the displacement.
precision highp float;

// Declared for common.glsl (its sampleSource is not used here).
uniform highp sampler2D u_source;
uniform vec2 u_invSourceSize;
// The wobbled frame at the image's size, straight RGBA.
uniform highp sampler2D u_frame;
// Image pixels per output pixel (OutputMapping.scaleX, scaleY).
uniform vec2 u_scale;
#include "common.glsl"

out vec4 o_color;

// The weight of image pixel k in the footprint [a, b) of one output pixel
// (its covered length), per axis.
float cover(float k, float a, float b) {
    return max(0.0, min(b, k + 1.0) - max(a, k));
}

void main() {
    vec2 pixel = outputPixel();
    ivec2 size = textureSize(u_frame, 0);
    // The footprint of output pixel floor(pixel) in image pixels.
    vec2 a = floor(pixel) * u_scale;
    vec2 b = a + u_scale;
    int x0 = int(floor(a.x)), y0 = int(floor(a.y));
    int x1 = min(size.x - 1, int(ceil(b.x)) - 1), y1 = min(size.y - 1, int(ceil(b.y)) - 1);
    vec4 pm = vec4(0.0);
    vec3 straight = vec3(0.0);
    for (int y = y0; y <= y1; y++) {
        float wy = cover(float(y), a.y, b.y);
        for (int x = x0; x <= x1; x++) {
            float w = cover(float(x), a.x, b.x) * wy;
            vec4 c = texelFetch(u_frame, ivec2(x, y), 0);
            pm += w * vec4(c.rgb * c.a, c.a);
            straight += w * c.rgb;
        }
    }
    float area = u_scale.x * u_scale.y;
    pm /= area;
    straight /= area;
    vec4 color = pm.a >= 0.5 / 255.0 ? vec4(pm.rgb / pm.a, pm.a) : vec4(straight, 0.0);
    o_color = overlaid(color, pixel);
}
