// The plate's texture fill (see include/wobble_vision.h, wobble_fill_texture):
// coarse-to-fine patch-based completion (Wexler, Shechtman and Irani 2007,
// with PatchMatch's nearest-neighbour search, Barnes et al. 2009). Plain C++
// on byte buffers but for the coarsest level's first guess (cv::inpaint,
// Telea) ; one thread, integer distances, a fixed pseudo-random sequence and
// a fixed order of work: the same bytes on every machine.
#include "wobble_vision.h"
#include "shared.hpp"

#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/photo.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <vector>

namespace {

using wobble_vision::Reproducible;
using wobble_vision::describe;
using wobble_vision::guarded;

/// A fixed pseudo-random sequence (xorshift64*): the same on every machine.
struct Sequence {
    uint64_t s;
    explicit Sequence(uint64_t seed) : s(seed) {}
    uint32_t next() {
        s ^= s >> 12; s ^= s << 25; s ^= s >> 27;
        return static_cast<uint32_t>((s * 2685821657736338717ULL) >> 32);
    }
    /// A whole number in [-r, r].
    int within(int r) { return r <= 0 ? 0 : static_cast<int>(next() % static_cast<uint32_t>(2 * r + 1)) - r; }
};

/// One level of the pyramid: colours (3 ints a pixel, 0…255 × 16 for
/// sub-level precision) and the hole (1 where the colour is to be found).
struct Level {
    int w = 0, h = 0;
    std::vector<int32_t> colour;
    std::vector<uint8_t> hole;
};

constexpr int patchRadius = 3;              // 7×7 patches
constexpr int scale = 16;                   // colour units per level of 255
constexpr double spreadShare = 0.25;        // voting weights: exp(-distance / (share × mean distance))
constexpr int coarseIterations = 4, finestIterations = 2;
constexpr int solvedDepth = 32;             // finest-level pixels: how deep into the hole the two finest levels solve

/// The next coarser level: 2×2 blocks; a block is hole when any of its
/// pixels is; its colour the mean of its known pixels.
Level coarser(const Level &f) {
    Level c;
    c.w = (f.w + 1) / 2; c.h = (f.h + 1) / 2;
    c.colour.assign(static_cast<size_t>(c.w) * c.h * 3, 0);
    c.hole.assign(static_cast<size_t>(c.w) * c.h, 0);
    for (int y = 0; y < c.h; y++)
        for (int x = 0; x < c.w; x++) {
            int sum[3] = {0, 0, 0}, n = 0;
            bool hole = false;
            for (int dy = 0; dy < 2; dy++)
                for (int dx = 0; dx < 2; dx++) {
                    const int fx = 2 * x + dx, fy = 2 * y + dy;
                    if (fx >= f.w || fy >= f.h) continue;
                    const size_t k = static_cast<size_t>(fy) * f.w + fx;
                    if (f.hole[k]) { hole = true; continue; }
                    for (int ch = 0; ch < 3; ch++) sum[ch] += f.colour[k * 3 + ch];
                    n++;
                }
            const size_t k = static_cast<size_t>(y) * c.w + x;
            c.hole[k] = hole ? 1 : 0;
            for (int ch = 0; ch < 3; ch++) c.colour[k * 3 + ch] = n > 0 ? (sum[ch] + n / 2) / n : 0;
        }
    return c;
}

/// Completes `L`'s hole in place: `iterations` rounds of nearest patches
/// (PatchMatch: propagation and random search over patches wholly outside
/// the hole) and voting, from the colours already there and the offsets in
/// `offset` (2 ints a pixel: source x and y of the patch centred on each
/// target pixel; refreshed where invalid).
void complete(Level &L, std::vector<int32_t> &offset, int iterations, Sequence &random, bool centres, int reach, int search) {
    const int w = L.w, h = L.h, r = patchRadius;
    const size_t n = static_cast<size_t>(w) * h;
    // The hole's pixels solved here: those within `reach` of the picture
    // outside it (all when 0); deeper ones keep the coarser level's colours
    // (they lie under the object however it moves: only its edge uncovers).
    std::vector<uint8_t> active(L.hole);
    if (reach > 0) {
        cv::Mat outside(h, w, CV_8UC1), d;
        for (size_t k = 0; k < n; k++) outside.data[k] = L.hole[k] ? 255 : 0;
        cv::distanceTransform(outside, d, cv::DIST_C, 3);
        for (size_t k = 0; k < n; k++)
            if (L.hole[k] && d.at<float>(static_cast<int>(k / w), static_cast<int>(k % w)) > reach) active[k] = 0;
    }
    // Sources: centres whose whole patch lies inside the level and outside the hole.
    std::vector<uint8_t> source(n, 0);
    std::vector<int> sources;
    {
        // Rows of hole counts for a box sum.
        std::vector<int> integral((w + 1) * static_cast<size_t>(h + 1), 0);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                integral[(y + 1) * static_cast<size_t>(w + 1) + x + 1] = L.hole[static_cast<size_t>(y) * w + x] + integral[y * static_cast<size_t>(w + 1) + x + 1] +
                                                                       integral[(y + 1) * static_cast<size_t>(w + 1) + x] - integral[y * static_cast<size_t>(w + 1) + x];
        for (int y = r; y < h - r; y++)
            for (int x = r; x < w - r; x++) {
                const int x0 = x - r, y0 = y - r, x1 = x + r + 1, y1 = y + r + 1;
                const int holes = integral[y1 * static_cast<size_t>(w + 1) + x1] - integral[y0 * static_cast<size_t>(w + 1) + x1] -
                                  integral[y1 * static_cast<size_t>(w + 1) + x0] + integral[y0 * static_cast<size_t>(w + 1) + x0];
                if (holes == 0) { source[static_cast<size_t>(y) * w + x] = 1; sources.push_back(y * w + x); }
            }
    }
    if (sources.empty()) return;
    // Targets: centres whose patch holds a hole pixel (within r of one).
    std::vector<uint8_t> target(n, 0);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            if (!active[static_cast<size_t>(y) * w + x]) continue;
            for (int ty = std::max(0, y - r); ty <= std::min(h - 1, y + r); ty++)
                for (int tx = std::max(0, x - r); tx <= std::min(w - 1, x + r); tx++) target[static_cast<size_t>(ty) * w + tx] = 1;
        }
    auto distance = [&](int tx, int ty, int sx, int sy, int64_t bound) -> int64_t {
        int64_t d = 0;
        for (int dy = -r; dy <= r; dy++) {
            const int y = ty + dy;
            if (y < 0 || y >= h) continue;
            const int32_t *t = &L.colour[(static_cast<size_t>(y) * w) * 3];
            const int32_t *s = &L.colour[(static_cast<size_t>(sy + dy) * w + sx) * 3];
            for (int dx = -r; dx <= r; dx++) {
                const int x = tx + dx;
                if (x < 0 || x >= w) continue;
                const int32_t *a = t + x * 3, *b = s + dx * 3;
                const int64_t e0 = a[0] - b[0], e1 = a[1] - b[1], e2 = a[2] - b[2];
                d += e0 * e0 + e1 * e1 + e2 * e2;
            }
            if (d >= bound) return d;
        }
        return d;
    };
    std::vector<int64_t> cost(n, INT64_MAX);
    // Offsets that are no source (new targets, the image's edge) get a random one.
    for (size_t k = 0; k < n; k++) {
        if (!target[k]) continue;
        const int sx = offset[k * 2], sy = offset[k * 2 + 1];
        if (sx < 0 || sy < 0 || sx >= w || sy >= h || !source[static_cast<size_t>(sy) * w + sx]) {
            const int pick = sources[random.next() % sources.size()];
            offset[k * 2] = pick % w; offset[k * 2 + 1] = pick / w;
        }
    }
    std::vector<int32_t> accum(n * 3);   // at most 49 patches × 1024 × 4080: fits
    std::vector<int32_t> weight(n);
    const int searchRadius = search > 0 ? search : std::max(w, h);
    for (int it = 0; it < iterations; it++) {
        for (size_t k = 0; k < n; k++)
            if (target[k]) cost[k] = distance(static_cast<int>(k % w), static_cast<int>(k / w), offset[k * 2], offset[k * 2 + 1], INT64_MAX);
        // PatchMatch: two passes, forward then backward.
        for (int pass = 0; pass < 2; pass++) {
            const bool forward = pass % 2 == 0;
            const int step = forward ? 1 : -1;
            for (int yy = 0; yy < h; yy++) {
                const int y = forward ? yy : h - 1 - yy;
                for (int xx = 0; xx < w; xx++) {
                    const int x = forward ? xx : w - 1 - xx;
                    const size_t k = static_cast<size_t>(y) * w + x;
                    if (!target[k]) continue;
                    auto attempt = [&](int sx, int sy) {
                        if (sx < 0 || sy < 0 || sx >= w || sy >= h || !source[static_cast<size_t>(sy) * w + sx]) return;
                        if (sx == offset[k * 2] && sy == offset[k * 2 + 1]) return;
                        const int64_t d = distance(x, y, sx, sy, cost[k]);
                        if (d < cost[k]) { cost[k] = d; offset[k * 2] = sx; offset[k * 2 + 1] = sy; }
                    };
                    // Propagation: the neighbours' sources, shifted by one.
                    const int px = x - step, py = y - step;
                    if (px >= 0 && px < w && target[static_cast<size_t>(y) * w + px])
                        attempt(offset[(static_cast<size_t>(y) * w + px) * 2] + step, offset[(static_cast<size_t>(y) * w + px) * 2 + 1]);
                    if (py >= 0 && py < h && target[static_cast<size_t>(py) * w + x])
                        attempt(offset[(static_cast<size_t>(py) * w + x) * 2], offset[(static_cast<size_t>(py) * w + x) * 2 + 1] + step);
                    // Random search around the best so far, halving the radius.
                    for (int rad = searchRadius; rad >= 1; rad /= 2) {
                        attempt(offset[k * 2] + random.within(rad), offset[k * 2 + 1] + random.within(rad));
                    }
                }
            }
        }
        if (centres && it == iterations - 1) {
            // The last round: each hole pixel its own patch's centre (no
            // mean of overlapping patches: the texture's detail kept).
            std::vector<int32_t> copy(L.colour);
            for (size_t k = 0; k < n; k++)
                if (active[k]) {
                    const size_t s = static_cast<size_t>(offset[k * 2 + 1]) * w + offset[k * 2];
                    for (int c = 0; c < 3; c++) L.colour[k * 3 + c] = copy[s * 3 + c];
                }
            break;
        }
        // Voting: each hole pixel the weighted mean of what the patches over
        // it put there (weights fall with the patch's distance).
        std::fill(accum.begin(), accum.end(), 0);
        std::fill(weight.begin(), weight.end(), 0);
        // The weights' scale: the mean distance of the targets' patches.
        double meanCost = 0;
        size_t targets = 0;
        for (size_t k = 0; k < n; k++)
            if (target[k]) { meanCost += static_cast<double>(cost[k]); targets++; }
        meanCost = targets > 0 ? meanCost / targets : 1;
        const double spread = std::max(meanCost * spreadShare, 1.0);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                const size_t k = static_cast<size_t>(y) * w + x;
                if (!target[k]) continue;
                // Integer weights (1…1024): the same sums on every machine.
                const int32_t wgt = 1 + static_cast<int32_t>(std::lround(1023.0 * std::exp(-static_cast<double>(cost[k]) / spread)));
                const int sx = offset[k * 2], sy = offset[k * 2 + 1];
                for (int dy = -r; dy <= r; dy++) {
                    const int ty = y + dy;
                    if (ty < 0 || ty >= h) continue;
                    for (int dx = -r; dx <= r; dx++) {
                        const int tx = x + dx;
                        if (tx < 0 || tx >= w) continue;
                        const size_t t = static_cast<size_t>(ty) * w + tx;
                        if (!active[t]) continue;
                        const size_t s = static_cast<size_t>(sy + dy) * w + (sx + dx);
                        for (int c = 0; c < 3; c++) accum[t * 3 + c] += wgt * L.colour[s * 3 + c];
                        weight[t] += wgt;
                    }
                }
            }
        for (size_t t = 0; t < n; t++)
            if (active[t] && weight[t] > 0)
                for (int c = 0; c < 3; c++) L.colour[t * 3 + c] = static_cast<int32_t>((accum[t * 3 + c] + weight[t] / 2) / weight[t]);
    }
}

}  // namespace

extern "C" int wobble_fill_texture(uint8_t *rgb, int width, int height, size_t stride, const uint8_t *mask,
                                   char *error, size_t errorSize) {
    return guarded(error, errorSize, "fill", [&]() -> int {
        if (width <= 0 || height <= 0) {
            describe(error, errorSize, "fill: empty image");
            return -1;
        }
        const int r = patchRadius;
        std::vector<Level> levels(1);
        {
        Level &finest = levels[0];
        finest.w = width; finest.h = height;
        finest.colour.resize(static_cast<size_t>(width) * height * 3);
        finest.hole.resize(static_cast<size_t>(width) * height);
        bool any = false;
        for (int y = 0; y < height; y++)
            for (int x = 0; x < width; x++) {
                const size_t k = static_cast<size_t>(y) * width + x;
                finest.hole[k] = mask[k] != 0 ? 1 : 0;
                any = any || finest.hole[k];
                for (int c = 0; c < 3; c++) finest.colour[k * 3 + c] = rgb[static_cast<size_t>(y) * stride + static_cast<size_t>(x) * 3 + c] * scale;
            }
        if (!any) return 0;
        }
        // Coarser levels while the hole is wider than a few patches and the
        // level keeps enough room for sources.
        auto depth = [&](const Level &L) {
            cv::Mat known(L.h, L.w, CV_8UC1);
            for (size_t k = 0; k < L.hole.size(); k++) known.data[k] = L.hole[k] ? 255 : 0;
            cv::Mat d;
            cv::distanceTransform(known, d, cv::DIST_C, 3);
            double m = 0;
            cv::minMaxLoc(d, nullptr, &m);
            return m;
        };
        {
            Reproducible reproducible;
            while (depth(levels.back()) > 2 * r && std::min(levels.back().w, levels.back().h) >= 8 * (2 * r + 1)) {
                levels.push_back(coarser(levels.back()));
            }
        }
        // The coarsest level's first guess: Telea's fill.
        {
            Level &c = levels.back();
            cv::Mat image(c.h, c.w, CV_8UC3), holes(c.h, c.w, CV_8UC1), filled;
            for (size_t k = 0; k < c.hole.size(); k++) {
                holes.data[k] = c.hole[k] ? 255 : 0;
                for (int ch = 0; ch < 3; ch++) image.data[k * 3 + ch] = static_cast<uint8_t>((c.colour[k * 3 + ch] + scale / 2) / scale);
            }
            Reproducible reproducible;
            cv::inpaint(image, holes, filled, 3, cv::INPAINT_TELEA);
            for (size_t k = 0; k < c.hole.size(); k++)
                if (c.hole[k])
                    for (int ch = 0; ch < 3; ch++) c.colour[k * 3 + ch] = filled.data[k * 3 + ch] * scale;
        }
        Sequence random(0x706c617465ULL);
        std::vector<int32_t> offset(static_cast<size_t>(levels.back().w) * levels.back().h * 2, -1);
        for (int li = static_cast<int>(levels.size()) - 1; li >= 0; li--) {
            Level &L = levels[li];
            const bool last = li == 0;
            // At the finest level the last round copies each pixel from its own
            // patch (the texture's detail) instead of the patches' mean.
            // The two finest levels solve the hole `reach` pixels deep (of
            // the finest level's); the coarser ones all of it.
            const int reach = li == 0 ? solvedDepth : li == 1 ? solvedDepth / 2 : 0;
            // There the offsets come from the coarser level: the random
            // search refines them nearby.
            const int search = li == 0 ? 16 : li == 1 ? 32 : 0;
            complete(L, offset, last ? finestIterations : coarseIterations, random, last, reach, search);
            if (last) break;
            // Up one level: the hole's colours and the offsets, doubled.
            Level &F = levels[li - 1];
            std::vector<int32_t> next(static_cast<size_t>(F.w) * F.h * 2, -1);
            for (int y = 0; y < F.h; y++)
                for (int x = 0; x < F.w; x++) {
                    const size_t k = static_cast<size_t>(y) * F.w + x, c = static_cast<size_t>(y / 2) * L.w + x / 2;
                    next[k * 2] = offset[c * 2] * 2 + (x % 2);
                    next[k * 2 + 1] = offset[c * 2 + 1] * 2 + (y % 2);
                    if (F.hole[k])
                        for (int ch = 0; ch < 3; ch++) F.colour[k * 3 + ch] = L.colour[c * 3 + ch];
                }
            offset.swap(next);
        }
        const Level &finest = levels[0];
        for (int y = 0; y < height; y++)
            for (int x = 0; x < width; x++) {
                const size_t k = static_cast<size_t>(y) * width + x;
                if (!finest.hole[k]) continue;
                for (int c = 0; c < 3; c++) {
                    const int v = (finest.colour[k * 3 + c] + scale / 2) / scale;
                    rgb[static_cast<size_t>(y) * stride + static_cast<size_t>(x) * 3 + c] = static_cast<uint8_t>(std::min(255, std::max(0, v)));
                }
            }
        return 0;
    });
}
