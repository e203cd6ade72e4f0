#version 300 es
// A screen-aligned rectangle, given in framebuffer pixels, drawn as a
// 4-vertex triangle strip without vertex buffers (gl_VertexID picks the
// corner). Framebuffer row 0 holds output row 0 (the top of the image), so
// glReadPixels returns rows top to bottom with no flip anywhere.
precision highp float;

// (x0, y0, x1, y1): the rectangle in framebuffer pixels.
uniform vec4 u_rect;
// The viewport size in pixels.
uniform vec2 u_viewport;

void main() {
    vec2 corner = vec2(float(gl_VertexID & 1), float(gl_VertexID >> 1));
    vec2 pixel = mix(u_rect.xy, u_rect.zw, corner);
    gl_Position = vec4(pixel / u_viewport * 2.0 - 1.0, 0.0, 1.0);
}
