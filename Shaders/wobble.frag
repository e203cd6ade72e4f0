#version 300 es
// One moving region (SPEC §5), drawn over the region's bounding box after
// the still image. Regions are drawn last to first; a fragment where this
// region's displacement is zero is discarded, so the first region (in
// prepare order) whose displacement is non-zero wins.
//
// The displacement magnitude m(p) = R·(cos θ' − cos θ) is not solved here:
// it depends only on the region's shape and peak M (which change at most
// once per cycle), so the renderer evaluates it once, in doubles, with the
// very function the CPU reference uses (RegionShape.displacement), and keeps
// it in an R32F texture, one texel per output pixel of the box. Per frame
// only the cycle progress and the direction change: offset = m·progress·dir.
// No loops, no transcendental functions, nothing that can produce NaN.
precision highp float;

uniform highp sampler2D u_source;
// m(p) per output pixel of the box; 0 where the region does not move p.
uniform highp sampler2D u_field;
// Output pixel of the field's texel (0, 0).
uniform ivec2 u_fieldOrigin;
// progress · direction (image pixels per pixel of m).
uniform vec2 u_shift;
uniform vec2 u_scale;
uniform vec2 u_invSourceSize;

out vec4 o_color;

void main() {
    ivec2 q = ivec2(gl_FragCoord.xy) - u_fieldOrigin;
    float m = texelFetch(u_field, q, 0).r;
    if (m == 0.0) {
        discard;
    }
    vec2 p = gl_FragCoord.xy * u_scale + m * u_shift;
    o_color = texture(u_source, p * u_invSourceSize);
}
