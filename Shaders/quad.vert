#version 300 es
// A screen-aligned rectangle, given in output pixels, drawn as a 4-vertex
// triangle strip without vertex buffers (gl_VertexID picks the corner).
//
// u_place maps framebuffer pixels to output pixels: output = (ax·x + bx,
// ay·y + by) with u_place = (ax, bx, ay, by). In the renderer's own
// framebuffer it is (1, 0, 1, 0): framebuffer row 0 holds output row 0 (the
// top of the image), so glReadPixels returns rows top to bottom with no flip
// anywhere. In a window's back buffer (row 0 at the bottom, the image's
// top-left at (ox, oy) from the window's top-left, H rows) it is
// (1, -ox, -1, H - oy).
precision highp float;

// (x0, y0, x1, y1): the rectangle in output pixels.
uniform vec4 u_rect;
// The viewport size in pixels.
uniform vec2 u_viewport;
uniform vec4 u_place;

void main() {
    vec2 corner = vec2(float(gl_VertexID & 1), float(gl_VertexID >> 1));
    vec2 pixel = mix(u_rect.xy, u_rect.zw, corner);
    vec2 fb = vec2((pixel.x - u_place.y) / u_place.x, (pixel.y - u_place.w) / u_place.z);
    gl_Position = vec4(fb / u_viewport * 2.0 - 1.0, 0.0, 1.0);
}
