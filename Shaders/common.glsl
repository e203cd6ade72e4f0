// Shared by copy.frag, wobble.frag and resolve.frag, which include it
// (GLProgram puts the text in, in place of their include line, before
// compiling).

// Framebuffer pixels to output pixels: output = (ax·x + bx, ay·y + by) with
// u_place = (ax, bx, ay, by) (quad.vert).
uniform vec4 u_place;
// A straight-alpha layer of the output size drawn over the frame (the
// studio's handles, in a window), when u_withOverlay is 1.
uniform highp sampler2D u_overlay;
uniform int u_withOverlay;

// The output pixel centre (i + 0.5, j + 0.5) of this fragment.
vec2 outputPixel() {
    return gl_FragCoord.xy * u_place.xz + u_place.yw;
}

// `color` with the overlay's pixel at `pixel` blended over it.
vec4 overlaid(vec4 color, vec2 pixel) {
    if (u_withOverlay == 0) {
        return color;
    }
    vec4 o = texelFetch(u_overlay, ivec2(pixel), 0);
    return vec4(mix(color.rgb, o.rgb, o.a), max(color.a, o.a));
}
