// The CPU renderer's per-row kernel at several CPU levels (see
// include/wobble_kernel.h). Exactness against the Swift kernel rests on
// doing the same IEEE single-precision operations in the same order: no
// contraction into fused multiply-adds (the pragma), no fast-math.
#include "wobble_kernel.h"
#include <string.h>

#pragma STDC FP_CONTRACT OFF

#if defined(__x86_64__) && defined(__clang__)
#include <immintrin.h>
#define WOBBLE_HAVE_AVX2 1
#endif

int wobble_kernel_best_level(void) {
#ifdef WOBBLE_HAVE_AVX2
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return WOBBLE_KERNEL_AVX512;
    if (__builtin_cpu_supports("avx2")) return WOBBLE_KERNEL_AVX2;
#endif
    return WOBBLE_KERNEL_BASELINE;
}

typedef float float4 __attribute__((ext_vector_type(4)));
typedef uint8_t byte4 __attribute__((ext_vector_type(4)));
typedef uint32_t word4 __attribute__((ext_vector_type(4)));

/// A pixel's four bytes as floats (channel 0 the lowest byte).
static inline float4 channels(uint32_t p) {
    byte4 b;
    memcpy(&b, &p, 4);
    return __builtin_convertvector(b, float4);
}

/// Four channel values rounded to bytes (to nearest, a tie to even: the
/// low byte of `v + 1.5·2²³`'s bits) and packed into a pixel.
static inline uint32_t packed(float4 v) {
    float4 biased = v + 12582912.0f;
    word4 bits;
    memcpy(&bits, &biased, 16);
    byte4 b = __builtin_convertvector(bits & 0xFF, byte4);
    uint32_t p;
    memcpy(&p, &b, 4);
    return p;
}

/// One pixel: the four texels at `p`, `p + 1`, `p + w`, `p + w + 1` with
/// fractions `ax`, `ay` (FastCPURenderer.blend), four channels at once.
static inline uint32_t blend1(const uint32_t *p, long w, float ax, float ay, int opaque) {
    const float4 c00 = channels(p[0]), c10 = channels(p[1]), c01 = channels(p[w]), c11 = channels(p[w + 1]);
    const float w00 = (1 - ax) * (1 - ay), w10 = ax * (1 - ay), w01 = (1 - ax) * ay, w11 = ax * ay;
    float4 v;
    if (opaque) {
        v = c00 * w00 + c10 * w10 + c01 * w01 + c11 * w11;
    } else {
        const float a00 = c00.w * w00, a10 = c10.w * w10, a01 = c01.w * w01, a11 = c11.w * w11;
        const float alpha = a00 + a10 + a01 + a11;
        if (alpha >= 0.5f) {
            v = (c00 * a00 + c10 * a10 + c01 * a01 + c11 * a11) / alpha;
        } else {
            v = c00 * w00 + c10 * w10 + c01 * w01 + c11 * w11;
        }
        v.w = alpha;
    }
    return packed(v);
}

/// Pixels `n0 ..< count` one at a time (the baseline, and the tail of the
/// vector levels).
static long row_scalar(long n0, const uint32_t *src, long sw, long sh, const float *field, long count, uint32_t *out,
                       float x, float stepX, float y, float vx, float vy, float fx, float fy, int opaque, int32_t *edges,
                       long e) {
    const float magic = 8388608.0f, right = (float)(sw - 1), bottom = (float)(sh - 1);
    for (long n = n0; n < count; n++) {
        const float m = field[n];
        if (!(m > 0)) continue;
        const float px = (x + (float)n * stepX + m * vx) * fx - 0.5f;
        const float py = (y + m * vy) * fy - 0.5f;
        if (px >= 0 && px < right && py >= 0 && py < bottom) {
            float rx = (px + magic) - magic, ry = (py + magic) - magic;
            if (rx > px) rx = rx - 1;
            if (ry > py) ry = ry - 1;
            out[n] = blend1(src + (long)ry * sw + (long)rx, sw, px - rx, py - ry, opaque);
        } else {
            edges[e++] = (int32_t)n;
        }
    }
    return e;
}

#ifdef WOBBLE_HAVE_AVX2
#define AVX2 __attribute__((target("avx2")))

/// The two texels at `p + i` and `p + i + 1` as one 64-bit value.
static inline long long pair(const uint32_t *p, int32_t i) {
    long long v;
    memcpy(&v, p + i, 8);
    return v;
}

AVX2 static inline __m256 channel(__m256i t, int shift) {
    return _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(t, shift), _mm256_set1_epi32(0xFF)));
}

AVX2 static inline __m256i bytes(__m256 v, int shift) {
    __m256i b = _mm256_and_si256(_mm256_castps_si256(_mm256_add_ps(v, _mm256_set1_ps(12582912.0f))), _mm256_set1_epi32(0xFF));
    return _mm256_slli_epi32(b, shift);
}

/// Eight pixels at a time: positions, floors and weights as the Swift
/// kernel's SIMD8 lanes, the four texels of each gathered, and the filter
/// done channel by channel over the eight pixels (each lane the same
/// operations as `blend1`).
AVX2 static long row_avx2(const uint32_t *src, long sw, long sh, const float *field, long count, uint32_t *out,
                          float x, float stepX, float y, float vx, float vy, float fx, float fy, int opaque, int32_t *edges) {
    const __m256 magic = _mm256_set1_ps(8388608.0f), one = _mm256_set1_ps(1), half = _mm256_set1_ps(0.5f);
    const __m256 zero = _mm256_setzero_ps();
    const __m256 right = _mm256_set1_ps((float)(sw - 1)), bottom = _mm256_set1_ps((float)(sh - 1));
    const __m256 lanes = _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256 vX = _mm256_set1_ps(x), vStep = _mm256_set1_ps(stepX), vY = _mm256_set1_ps(y);
    const __m256 vVx = _mm256_set1_ps(vx), vVy = _mm256_set1_ps(vy), vFx = _mm256_set1_ps(fx), vFy = _mm256_set1_ps(fy);
    const __m256i width = _mm256_set1_epi32((int)sw);
    const uint32_t *below = src + sw;
    long e = 0, n = 0;
    for (; n + 8 <= count; n += 8) {
        const __m256 m = _mm256_loadu_ps(field + n);
        const __m256 moving = _mm256_cmp_ps(m, zero, _CMP_GT_OQ);
        const int mv = _mm256_movemask_ps(moving);
        if (!mv) continue;
        const __m256 column = _mm256_add_ps(_mm256_set1_ps((float)n), lanes);
        const __m256 px = _mm256_sub_ps(
            _mm256_mul_ps(_mm256_add_ps(_mm256_add_ps(vX, _mm256_mul_ps(column, vStep)), _mm256_mul_ps(m, vVx)), vFx), half);
        const __m256 py = _mm256_sub_ps(_mm256_mul_ps(_mm256_add_ps(vY, _mm256_mul_ps(m, vVy)), vFy), half);
        __m256 rx = _mm256_sub_ps(_mm256_add_ps(px, magic), magic), ry = _mm256_sub_ps(_mm256_add_ps(py, magic), magic);
        rx = _mm256_blendv_ps(rx, _mm256_sub_ps(rx, one), _mm256_cmp_ps(rx, px, _CMP_GT_OQ));
        ry = _mm256_blendv_ps(ry, _mm256_sub_ps(ry, one), _mm256_cmp_ps(ry, py, _CMP_GT_OQ));
        const __m256 inside = _mm256_and_ps(
            _mm256_and_ps(_mm256_cmp_ps(px, zero, _CMP_GE_OQ), _mm256_cmp_ps(px, right, _CMP_LT_OQ)),
            _mm256_and_ps(_mm256_cmp_ps(py, zero, _CMP_GE_OQ), _mm256_cmp_ps(py, bottom, _CMP_LT_OQ)));
        const __m256 use = _mm256_and_ps(moving, inside);
        const int u = _mm256_movemask_ps(use);
        for (int k = 0, edge = mv & ~u; edge; k++, edge >>= 1)
            if (edge & 1) edges[e++] = (int32_t)(n + k);
        if (!u) continue;
        const __m256 ax = _mm256_sub_ps(px, rx), ay = _mm256_sub_ps(py, ry);
        const __m256i useBits = _mm256_castps_si256(use);
        __m256i index = _mm256_add_epi32(_mm256_mullo_epi32(_mm256_cvttps_epi32(ry), width), _mm256_cvttps_epi32(rx));
        index = _mm256_and_si256(index, useBits);
        // Each pixel's two texels of a row are one 64-bit load, put in
        // the order (pixels 0, 1, 4, 5 and 2, 3, 6, 7) that the shuffles
        // below take apart in pixel order (plain loads: AVX2's gathers
        // cost twice as much here).
        int32_t at[8];
        _mm256_storeu_si256((__m256i *)at, index);
        const __m256 r0a = _mm256_castsi256_ps(_mm256_setr_epi64x(pair(src, at[0]), pair(src, at[1]), pair(src, at[4]), pair(src, at[5])));
        const __m256 r0b = _mm256_castsi256_ps(_mm256_setr_epi64x(pair(src, at[2]), pair(src, at[3]), pair(src, at[6]), pair(src, at[7])));
        const __m256 r1a = _mm256_castsi256_ps(_mm256_setr_epi64x(pair(below, at[0]), pair(below, at[1]), pair(below, at[4]), pair(below, at[5])));
        const __m256 r1b = _mm256_castsi256_ps(_mm256_setr_epi64x(pair(below, at[2]), pair(below, at[3]), pair(below, at[6]), pair(below, at[7])));
        const __m256i t00 = _mm256_castps_si256(_mm256_shuffle_ps(r0a, r0b, _MM_SHUFFLE(2, 0, 2, 0)));
        const __m256i t10 = _mm256_castps_si256(_mm256_shuffle_ps(r0a, r0b, _MM_SHUFFLE(3, 1, 3, 1)));
        const __m256i t01 = _mm256_castps_si256(_mm256_shuffle_ps(r1a, r1b, _MM_SHUFFLE(2, 0, 2, 0)));
        const __m256i t11 = _mm256_castps_si256(_mm256_shuffle_ps(r1a, r1b, _MM_SHUFFLE(3, 1, 3, 1)));
        const __m256 bx = _mm256_sub_ps(one, ax), by = _mm256_sub_ps(one, ay);
        const __m256 w00 = _mm256_mul_ps(bx, by), w10 = _mm256_mul_ps(ax, by), w01 = _mm256_mul_ps(bx, ay),
                     w11 = _mm256_mul_ps(ax, ay);
        __m256i packed = _mm256_setzero_si256();
        if (opaque) {
            for (int ch = 0; ch < 4; ch++) {
                const int s = 8 * ch;
                const __m256 v = _mm256_add_ps(
                    _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(channel(t00, s), w00), _mm256_mul_ps(channel(t10, s), w10)),
                                  _mm256_mul_ps(channel(t01, s), w01)),
                    _mm256_mul_ps(channel(t11, s), w11));
                packed = _mm256_or_si256(packed, bytes(v, s));
            }
        } else {
            const __m256 a00 = _mm256_mul_ps(channel(t00, 24), w00), a10 = _mm256_mul_ps(channel(t10, 24), w10);
            const __m256 a01 = _mm256_mul_ps(channel(t01, 24), w01), a11 = _mm256_mul_ps(channel(t11, 24), w11);
            const __m256 alpha = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a00, a10), a01), a11);
            const __m256 premultiplied = _mm256_cmp_ps(alpha, half, _CMP_GE_OQ);
            for (int ch = 0; ch < 3; ch++) {
                const int s = 8 * ch;
                const __m256 c00 = channel(t00, s), c10 = channel(t10, s), c01 = channel(t01, s), c11 = channel(t11, s);
                const __m256 straight = _mm256_add_ps(
                    _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(c00, w00), _mm256_mul_ps(c10, w10)), _mm256_mul_ps(c01, w01)),
                    _mm256_mul_ps(c11, w11));
                const __m256 weighted = _mm256_div_ps(
                    _mm256_add_ps(
                        _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(c00, a00), _mm256_mul_ps(c10, a10)), _mm256_mul_ps(c01, a01)),
                        _mm256_mul_ps(c11, a11)),
                    alpha);
                packed = _mm256_or_si256(packed, bytes(_mm256_blendv_ps(straight, weighted, premultiplied), s));
            }
            packed = _mm256_or_si256(packed, bytes(alpha, 24));
        }
        _mm256_maskstore_epi32((int *)(out + n), useBits, packed);
    }
    return row_scalar(n, src, sw, sh, field, count, out, x, stepX, y, vx, vy, fx, fy, opaque, edges, e);
}
#endif


#ifdef WOBBLE_HAVE_AVX2
#define AVX512 __attribute__((target("avx512f")))

AVX512 static inline __m512 channel16(__m512i t, int shift) {
    return _mm512_cvtepi32_ps(_mm512_and_si512(_mm512_srli_epi32(t, shift), _mm512_set1_epi32(0xFF)));
}

/// Channel values in [0, 255.5] rounded to whole numbers (to nearest, a
/// tie to even: the default rounding mode).
AVX512 static inline __m512i rounded16(__m512 v) { return _mm512_cvtps_epi32(v); }

/// Lane k of the result is texel `index[k]` (0 to 31) from `p`.
AVX512 static inline __m512i pick(const uint32_t *p, __m512i index) {
    return _mm512_permutex2var_epi32(_mm512_loadu_si512(p), index, _mm512_loadu_si512(p + 16));
}

/// Sixteen pixels at a time (AVX-512F): each lane the same operations as
/// `blend1`, and no scalar tail (the last pixels of a row are the masked
/// lanes of one more step). The texels: where the used lanes' columns lie
/// within 31 of each other and their rows are two neighbours (nearly
/// always: the offset changes little over sixteen pixels), the rows' 32
/// texels are loaded once and each lane's picked by a permute; otherwise
/// gathered. An opaque image's filtered alpha is 255 to within a few ulps,
/// which rounds to 255, so it is not computed; the channels are rounded by
/// the conversion in the default rounding mode (to nearest, a tie to even:
/// the integer `packed` takes from `v + 1.5·2²³`).
AVX512 static long row_avx512(const uint32_t *src, long sw, long sh, const float *field, long count, uint32_t *out,
                          float x, float stepX, float y, float vx, float vy, float fx, float fy, int opaque, int32_t *edges) {
    const __m512 magic = _mm512_set1_ps(8388608.0f), one = _mm512_set1_ps(1), half = _mm512_set1_ps(0.5f);
    const __m512 zero = _mm512_setzero_ps();
    const __m512 right = _mm512_set1_ps((float)(sw - 1)), bottom = _mm512_set1_ps((float)(sh - 1));
    const __m512 lanes = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512 vX = _mm512_set1_ps(x), vStep = _mm512_set1_ps(stepX), vY = _mm512_set1_ps(y);
    const __m512 vVx = _mm512_set1_ps(vx), vVy = _mm512_set1_ps(vy), vFx = _mm512_set1_ps(fx), vFy = _mm512_set1_ps(fy);
    const __m512i width = _mm512_set1_epi32((int)sw), oneI = _mm512_set1_epi32(1);
    long e = 0;
    for (long n = 0; n < count; n += 16) {
        const __mmask16 valid = count - n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (count - n)) - 1);
        const __m512 m = _mm512_maskz_loadu_ps(valid, field + n);
        const __mmask16 mv = _mm512_cmp_ps_mask(m, zero, _CMP_GT_OQ);
        if (!mv) continue;
        const __m512 column = _mm512_add_ps(_mm512_set1_ps((float)n), lanes);
        const __m512 px = _mm512_sub_ps(
            _mm512_mul_ps(_mm512_add_ps(_mm512_add_ps(vX, _mm512_mul_ps(column, vStep)), _mm512_mul_ps(m, vVx)), vFx), half);
        const __m512 py = _mm512_sub_ps(_mm512_mul_ps(_mm512_add_ps(vY, _mm512_mul_ps(m, vVy)), vFy), half);
        __m512 rx = _mm512_sub_ps(_mm512_add_ps(px, magic), magic), ry = _mm512_sub_ps(_mm512_add_ps(py, magic), magic);
        rx = _mm512_mask_sub_ps(rx, _mm512_cmp_ps_mask(rx, px, _CMP_GT_OQ), rx, one);
        ry = _mm512_mask_sub_ps(ry, _mm512_cmp_ps_mask(ry, py, _CMP_GT_OQ), ry, one);
        __mmask16 use = _mm512_mask_cmp_ps_mask(mv, px, zero, _CMP_GE_OQ);
        use = _mm512_mask_cmp_ps_mask(use, px, right, _CMP_LT_OQ);
        use = _mm512_mask_cmp_ps_mask(use, py, zero, _CMP_GE_OQ);
        use = _mm512_mask_cmp_ps_mask(use, py, bottom, _CMP_LT_OQ);
        for (unsigned edge = mv & ~use; edge; edge &= edge - 1) edges[e++] = (int32_t)(n + __builtin_ctz(edge));
        if (!use) continue;
        const __m512 ax = _mm512_sub_ps(px, rx), ay = _mm512_sub_ps(py, ry);
        const __m512i ix = _mm512_cvttps_epi32(rx), iy = _mm512_cvttps_epi32(ry);
        // The texels: where the used lanes' columns lie in a window of 32
        // and their rows in two neighbours, four 32-texel windows permuted;
        // else gathered.
        const int first = __builtin_ctz(use);
        int32_t col[16], row[16];
        _mm512_storeu_si512(col, ix);
        _mm512_storeu_si512(row, iy);
        const int32_t x0 = col[first] - 4, y0 = row[first];
        const __m512i dx = _mm512_sub_epi32(ix, _mm512_set1_epi32(x0)), dy = _mm512_sub_epi32(iy, _mm512_set1_epi32(y0));
        const __mmask16 inWindow = _mm512_mask_cmplt_epu32_mask(use, dx, _mm512_set1_epi32(31));
        const __mmask16 same = _mm512_mask_cmpeq_epi32_mask(use, dy, _mm512_setzero_si512());
        const __mmask16 below = _mm512_mask_cmpeq_epi32_mask(use, dy, oneI);
        const __mmask16 above = _mm512_mask_cmpeq_epi32_mask(use, dy, _mm512_set1_epi32(-1));
        __m512i t00, t10, t01, t11;
        if (inWindow == use && x0 >= 0 && x0 + 32 <= sw && ((same | below) == use || (same | above) == use)) {
            // Rows r0 (the lanes not in `lower`) and r0 + 1 (those in `lower`).
            const int32_t r0 = (same | below) == use ? y0 : y0 - 1;
            const __mmask16 lower = (same | below) == use ? below : same;
            const uint32_t *a = src + (long)r0 * sw + x0, *b = a + sw, *c = b + sw;
            const __m512i dx1 = _mm512_add_epi32(dx, oneI);
            t00 = pick(a, dx); t10 = pick(a, dx1);
            t01 = pick(b, dx); t11 = pick(b, dx1);
            if (lower) {
                t00 = _mm512_mask_blend_epi32(lower, t00, t01);
                t10 = _mm512_mask_blend_epi32(lower, t10, t11);
                t01 = _mm512_mask_blend_epi32(lower, t01, pick(c, dx));
                t11 = _mm512_mask_blend_epi32(lower, t11, pick(c, dx1));
            }
        } else {
            const __m512i index = _mm512_add_epi32(_mm512_mullo_epi32(iy, width), ix);
            const __m512i z = _mm512_setzero_si512();
            t00 = _mm512_mask_i32gather_epi32(z, use, index, (const int *)src, 4);
            t10 = _mm512_mask_i32gather_epi32(z, use, index, (const int *)(src + 1), 4);
            t01 = _mm512_mask_i32gather_epi32(z, use, index, (const int *)(src + sw), 4);
            t11 = _mm512_mask_i32gather_epi32(z, use, index, (const int *)(src + sw + 1), 4);
        }
        const __m512 bx = _mm512_sub_ps(one, ax), by = _mm512_sub_ps(one, ay);
        const __m512 w00 = _mm512_mul_ps(bx, by), w10 = _mm512_mul_ps(ax, by), w01 = _mm512_mul_ps(bx, ay),
                     w11 = _mm512_mul_ps(ax, ay);
        __m512i packed;
        if (opaque) {
            // Every alpha 255: the filtered alpha is 255 to within a few
            // ulps, which rounds to 255.
            __m512i rgb[3];
            for (int ch = 0; ch < 3; ch++) {
                const int s = 8 * ch;
                rgb[ch] = rounded16(_mm512_add_ps(
                    _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(channel16(t00, s), w00), _mm512_mul_ps(channel16(t10, s), w10)),
                                  _mm512_mul_ps(channel16(t01, s), w01)),
                    _mm512_mul_ps(channel16(t11, s), w11)));
            }
            packed = _mm512_or_si512(_mm512_or_si512(rgb[0], _mm512_slli_epi32(rgb[1], 8)),
                                     _mm512_or_si512(_mm512_slli_epi32(rgb[2], 16), _mm512_set1_epi32((int)0xFF000000u)));
        } else {
            const __m512 a00 = _mm512_mul_ps(channel16(t00, 24), w00), a10 = _mm512_mul_ps(channel16(t10, 24), w10);
            const __m512 a01 = _mm512_mul_ps(channel16(t01, 24), w01), a11 = _mm512_mul_ps(channel16(t11, 24), w11);
            const __m512 alpha = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a00, a10), a01), a11);
            const __mmask16 premultiplied = _mm512_cmp_ps_mask(alpha, half, _CMP_GE_OQ);
            packed = _mm512_slli_epi32(rounded16(alpha), 24);
            for (int ch = 0; ch < 3; ch++) {
                const int s = 8 * ch;
                const __m512 c00 = channel16(t00, s), c10 = channel16(t10, s), c01 = channel16(t01, s), c11 = channel16(t11, s);
                const __m512 straight = _mm512_add_ps(
                    _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(c00, w00), _mm512_mul_ps(c10, w10)), _mm512_mul_ps(c01, w01)),
                    _mm512_mul_ps(c11, w11));
                const __m512 weighted = _mm512_div_ps(
                    _mm512_add_ps(
                        _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(c00, a00), _mm512_mul_ps(c10, a10)), _mm512_mul_ps(c01, a01)),
                        _mm512_mul_ps(c11, a11)),
                    alpha);
                packed = _mm512_or_si512(packed, _mm512_slli_epi32(rounded16(_mm512_mask_blend_ps(premultiplied, straight, weighted)), s));
            }
        }
        _mm512_mask_storeu_epi32(out + n, use, packed);
    }
    return e;
}
#endif

long wobble_moving_row(int level, const uint32_t *src, long sw, long sh, const float *field, long count, uint32_t *out,
                       float x, float stepX, float y, float vx, float vy, float fx, float fy, int opaque, int32_t *edges) {
#ifdef WOBBLE_HAVE_AVX2
    if (level >= WOBBLE_KERNEL_AVX512)
        return row_avx512(src, sw, sh, field, count, out, x, stepX, y, vx, vy, fx, fy, opaque, edges);
    if (level >= WOBBLE_KERNEL_AVX2)
        return row_avx2(src, sw, sh, field, count, out, x, stepX, y, vx, vy, fx, fy, opaque, edges);
#endif
    (void)level;
    return row_scalar(0, src, sw, sh, field, count, out, x, stepX, y, vx, vy, fx, fy, opaque, edges, 0);
}
