// Shared by copy.frag, wobble.frag and resolve.frag, which include it
// (GLProgram puts the text in, in place of their include line, before
// compiling). Each declares u_source and u_invSourceSize before including it.
//
// Switches: OVERLAY and MIRROR are uniforms (u_withOverlay, u_mirror) unless
// the program is compiled with them defined as 0 or 1 (wobble.frag's
// variants); INTERIOR (default 0) is 1 only in a program drawing regions
// whose every sample position the renderer has checked, per draw, to lie
// at least 1.5 texels inside the sampled texture, where mirroring and
// clamping cannot change it; OPAQUE (default 0) is 1 only when every texel
// of the sampled texture has alpha 1.
#ifndef OVERLAY
uniform int u_withOverlay;
#define OVERLAY u_withOverlay
#endif
#ifndef MIRROR
uniform int u_mirror;
#define MIRROR u_mirror
#endif
#ifndef INTERIOR
#define INTERIOR 0
#endif
#ifndef OPAQUE
#define OPAQUE 0
#endif

// Framebuffer pixels to output pixels: output = (ax·x + bx, ay·y + by) with
// u_place = (ax, bx, ay, by) (quad.vert).
uniform vec4 u_place;
// A straight-alpha layer of the output size drawn over the frame (the
// studio's handles, in a window), when OVERLAY is 1.
uniform highp sampler2D u_overlay;

// The output pixel centre (i + 0.5, j + 0.5) of this fragment.
vec2 outputPixel() {
    return gl_FragCoord.xy * u_place.xz + u_place.yw;
}

// `color` with the overlay's pixel at `pixel` blended over it.
vec4 overlaid(vec4 color, vec2 pixel) {
    if (OVERLAY == 0) {
        return color;
    }
    vec4 o = texelFetch(u_overlay, ivec2(pixel), 0);
    return vec4(mix(color.rgb, o.rgb, o.a), max(color.a, o.a));
}

// MIRROR 1: a sample position outside the image is mirrored back into it
// (edges("mirror")); 0: clamped to the edge pixel (edges("clamp")).

// x reflected into [0, size] at the borders (period 2·size), as
// CPURenderer.mirror; unchanged when MIRROR is 0.
float wrapped(float x, float size) {
    if (MIRROR == 0 || (x >= 0.0 && x <= size)) {
        return x;
    }
    float r = mod(x, 2.0 * size);
    return r > size ? 2.0 * size - r : r;
}

// The source at the source-image point p: bilinear on premultiplied values
// (colour × alpha), divided by the filtered alpha again, so no colour hidden
// under a fully transparent pixel bleeds into a visible one; where the
// filtered alpha rounds to 0 in 8 bits, the straight filtered colour
// (nothing is visible there). The
// four texels are fetched and weighted here, exactly as CPURenderer.sample
// does, rather than by the texture unit (which filters straight values).
vec4 sampleSource(vec2 p) {
    ivec2 size = textureSize(u_source, 0);
    vec2 s = vec2(size);
    // Source-image pixels to the sampled texture's pixels (it is smaller
    // than the image when the output is downscaled).
    vec2 q = p * u_invSourceSize * s;
#if INTERIOR
    // 1.5 ≤ q − 0.5 ≤ s − 2.5: wrapping and clamping would leave f and i1
    // as they are.
    vec2 f = q - 0.5;
    ivec2 i0 = ivec2(floor(f));
    ivec2 i1 = i0 + 1;
#else
    q = vec2(wrapped(q.x, s.x), wrapped(q.y, s.y));
    vec2 f = clamp(q - 0.5, vec2(0.0), s - 1.0);
    ivec2 i0 = ivec2(floor(f));
    ivec2 i1 = min(i0 + 1, size - 1);
#endif
    vec2 a = f - vec2(i0);
    vec4 c00 = texelFetch(u_source, i0, 0);
    vec4 c10 = texelFetch(u_source, ivec2(i1.x, i0.y), 0);
    vec4 c01 = texelFetch(u_source, ivec2(i0.x, i1.y), 0);
    vec4 c11 = texelFetch(u_source, i1, 0);
    vec4 pm = mix(mix(vec4(c00.rgb * c00.a, c00.a), vec4(c10.rgb * c10.a, c10.a), a.x),
                  mix(vec4(c01.rgb * c01.a, c01.a), vec4(c11.rgb * c11.a, c11.a), a.x), a.y);
#if OPAQUE
    // Every alpha is 1, so pm.a is 1 to within rounding, never under
    // 0.5/255: the straight colour below would never be used.
    return vec4(pm.rgb / pm.a, pm.a);
#else
    if (pm.a >= 0.5 / 255.0) {
        return vec4(pm.rgb / pm.a, pm.a);
    }
    return vec4(mix(mix(c00.rgb, c10.rgb, a.x), mix(c01.rgb, c11.rgb, a.x), a.y), 0.0);
#endif
}
