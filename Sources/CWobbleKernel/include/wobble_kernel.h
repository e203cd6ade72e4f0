// The CPU renderer's per-row kernel (FastCPURenderer.movingRow in Swift is
// its reference): one region's moving pixels of one row, each the bilinear
// filter of four texels, compiled for several CPU levels and chosen at run
// time. The same float operations in the same order as the Swift kernel,
// without contraction into fused multiply-adds, so the bytes are the same.
#ifndef WOBBLE_KERNEL_H
#define WOBBLE_KERNEL_H

#include <stdint.h>

/// The kernel levels: the baseline (any x86-64, or another architecture),
/// AVX2 (eight pixels at a time, texels gathered) and AVX-512F (sixteen at
/// a time, texels permuted from the rows' windows).
enum {
    WOBBLE_KERNEL_BASELINE = 0,
    WOBBLE_KERNEL_AVX2 = 1,
    WOBBLE_KERNEL_AVX512 = 2,
};

/// The best level this CPU (and its operating system) runs.
int wobble_kernel_best_level(void);

/// `count` pixels of one row that one region alone moves, as the Swift
/// kernel draws them: pixel `n` (skipped where `field[n] <= 0`) samples
/// `src` (`sw × sh` pixels, RGBA as one uint32 each) at
/// `((x + n·stepX + m·vx)·fx − ½, (y + m·vy)·fy − ½)` with `m = field[n]`;
/// where its four texels are inside the image, `out[n]` is their bilinear
/// filter (premultiplied and divided by alpha again unless `opaque`);
/// otherwise `n` is appended to `edges` (room for `count`) and `out[n]` is
/// left for the caller. Returns the number of `edges`. `sw · sh` must be
/// under 2³¹.
long wobble_moving_row(int level, const uint32_t *src, long sw, long sh, const float *field, long count, uint32_t *out,
                       float x, float stepX, float y, float vx, float vy, float fx, float fy, int opaque, int32_t *edges);

#endif
