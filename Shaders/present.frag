#version 300 es
// An RGBA image placed in a window (the studio's frame, chrome and
// inspector): the texture over the quad of quad.vert, u_rect in window
// pixels, u_place mapping the back buffer's pixels to window pixels
// (top-left origin). BACKDROP 0 copies the colour as opaque; 1 shows
// transparent pixels over a grey checkerboard of 8-pixel squares.
precision highp float;

uniform sampler2D u_image;
uniform vec4 u_rect;
uniform vec4 u_place;
uniform int u_backdrop;

out vec4 o_color;

void main() {
    vec2 pixel = gl_FragCoord.xy * u_place.xz + u_place.yw;
    vec2 uv = (pixel - u_rect.xy) / (u_rect.zw - u_rect.xy);
    vec4 c = texture(u_image, uv);
    if (u_backdrop == 0) {
        o_color = vec4(c.rgb, 1.0);
        return;
    }
    vec2 q = floor(gl_FragCoord.xy / 8.0);
    float k = mod(q.x + q.y, 2.0) < 1.0 ? 0.55 : 0.45;
    o_color = vec4(mix(vec3(k), c.rgb, c.a), 1.0);
}
