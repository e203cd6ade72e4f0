// With fill.cpp (the plate's texture fill), the only caller of OpenCV (see
// include/wobble_vision.h for why each function exists). Exceptions never leave this file: each becomes -1 and
// one line in the caller's buffer.
#include "wobble_vision.h"
#include "shared.hpp"

#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/imgproc/segmentation.hpp>
#include <opencv2/photo.hpp>

#include <cstdio>
#include <cstring>
#include <exception>

namespace {

using wobble_vision::Reproducible;
using wobble_vision::describe;
using wobble_vision::guarded;

}  // namespace

extern "C" int wobble_grabcut(const uint8_t *rgb, int width, int height, size_t stride, uint8_t *labels, int iterations,
                              char *error, size_t errorSize) {
    return guarded(error, errorSize, "grabCut", [&]() -> int {
        if (width <= 0 || height <= 0 || iterations <= 0) {
            describe(error, errorSize, "grabCut: empty image or no iterations");
            return -1;
        }
        Reproducible reproducible;
        // GMM initialisation (k-means++) draws from cv::theRNG(): fixed seed.
        cv::theRNG() = cv::RNG(0x776f62626c65ULL);
        cv::Mat image(height, width, CV_8UC3, const_cast<uint8_t *>(rgb), stride);
        cv::Mat mask(height, width, CV_8UC1, labels, static_cast<size_t>(width));
        cv::Mat background, object;
        cv::grabCut(image, mask, cv::Rect(), background, object, iterations, cv::GC_INIT_WITH_MASK);
        return 0;
    });
}

extern "C" int wobble_inpaint(uint8_t *rgb, int width, int height, size_t stride, const uint8_t *mask, double radius,
                              char *error, size_t errorSize) {
    return guarded(error, errorSize, "inpaint", [&]() -> int {
        if (width <= 0 || height <= 0) {
            describe(error, errorSize, "inpaint: empty image");
            return -1;
        }
        Reproducible reproducible;
        cv::Mat image(height, width, CV_8UC3, rgb, stride);
        cv::Mat holes(height, width, CV_8UC1, const_cast<uint8_t *>(mask), static_cast<size_t>(width));
        cv::Mat filled;
        cv::inpaint(image, holes, filled, radius, cv::INPAINT_TELEA);
        filled.copyTo(image);
        return 0;
    });
}

// ---------------------------------------------------------------------------
// Matting: soft alpha in a band around a cutout's edge, and the foreground and
// background colours there. Plain C++ on byte buffers (no OpenCV call but the
// guided filter's box sums); doubles, one thread, a fixed order of work: the
// same bytes on every machine.
// ---------------------------------------------------------------------------

#include <algorithm>
#include <cmath>
#include <vector>

namespace {

/// A 3×3 symmetric matrix's inverse (row-major, 9 doubles); false when singular.
bool invert3(const double m[9], double out[9]) {
    const double a = m[0], b = m[1], c = m[2], d = m[3], e = m[4], f = m[5], g = m[6], h = m[7], i = m[8];
    const double A = e * i - f * h, B = -(d * i - f * g), C = d * h - e * g;
    const double det = a * A + b * B + c * C;
    if (!(std::fabs(det) > 1e-300)) return false;
    const double s = 1.0 / det;
    out[0] = A * s; out[1] = -(b * i - c * h) * s; out[2] = (b * f - c * e) * s;
    out[3] = B * s; out[4] = (a * i - c * g) * s;  out[5] = -(a * f - c * d) * s;
    out[6] = C * s; out[7] = -(a * h - b * g) * s; out[8] = (a * e - b * d) * s;
    return true;
}

}  // namespace

extern "C" int wobble_matte_closed_form(const uint8_t *rgb, int width, int height, size_t stride, const uint8_t *known,
                                        uint8_t *alpha, double epsilon, int iterations, char *error, size_t errorSize) {
    return guarded(error, errorSize, "matte", [&]() -> int {
        if (width < 3 || height < 3 || iterations <= 0) {
            describe(error, errorSize, "matte: the picture is smaller than 3×3 or no iterations");
            return -1;
        }
        const int w = width, h = height;
        const size_t n = static_cast<size_t>(w) * static_cast<size_t>(h);
        std::vector<int> index(n, -1);
        std::vector<size_t> unknown;
        for (size_t p = 0; p < n; p++) {
            if (known[p] == 0) {
                index[p] = static_cast<int>(unknown.size());
                unknown.push_back(p);
            }
        }
        if (unknown.empty()) return 0;
        const size_t u = unknown.size();
        auto colour = [&](int x, int y, int c) { return rgb[static_cast<size_t>(y) * stride + static_cast<size_t>(x) * 3 + c] / 255.0; };
        // The Laplacian's rows of the unknown pixels: 25 coefficients each,
        // for the neighbours at (dx, dy) in [-2, 2]².
        std::vector<double> L(u * 25, 0.0);
        // Windows (3×3, inside the picture) that hold an unknown pixel.
        std::vector<uint8_t> window(n, 0);
        for (size_t k = 0; k < u; k++) {
            const int x = static_cast<int>(unknown[k] % w), y = static_cast<int>(unknown[k] / w);
            for (int cy = std::max(1, y - 1); cy <= std::min(h - 2, y + 1); cy++)
                for (int cx = std::max(1, x - 1); cx <= std::min(w - 2, x + 1); cx++) window[static_cast<size_t>(cy) * w + cx] = 1;
        }
        const double regular = epsilon / 9.0;
        for (int cy = 1; cy < h - 1; cy++) {
            for (int cx = 1; cx < w - 1; cx++) {
                if (!window[static_cast<size_t>(cy) * w + cx]) continue;
                double mu[3] = {0, 0, 0}, cov[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, I[9][3];
                for (int j = 0; j < 9; j++) {
                    const int x = cx + j % 3 - 1, y = cy + j / 3 - 1;
                    for (int c = 0; c < 3; c++) { I[j][c] = colour(x, y, c); mu[c] += I[j][c]; }
                }
                for (int c = 0; c < 3; c++) mu[c] /= 9.0;
                for (int j = 0; j < 9; j++)
                    for (int a = 0; a < 3; a++)
                        for (int b = 0; b < 3; b++) cov[a * 3 + b] += (I[j][a] - mu[a]) * (I[j][b] - mu[b]) / 9.0;
                for (int a = 0; a < 3; a++) cov[a * 4] += regular;
                double inv[9];
                if (!invert3(cov, inv)) continue;
                double d[9][3], md[9][3];
                for (int j = 0; j < 9; j++) {
                    for (int c = 0; c < 3; c++) d[j][c] = I[j][c] - mu[c];
                    for (int a = 0; a < 3; a++) md[j][a] = inv[a * 3] * d[j][0] + inv[a * 3 + 1] * d[j][1] + inv[a * 3 + 2] * d[j][2];
                }
                for (int i = 0; i < 9; i++) {
                    const int xi = cx + i % 3 - 1, yi = cy + i / 3 - 1;
                    const int ki = index[static_cast<size_t>(yi) * w + xi];
                    if (ki < 0) continue;
                    double *row = &L[static_cast<size_t>(ki) * 25];
                    for (int j = 0; j < 9; j++) {
                        const int xj = cx + j % 3 - 1, yj = cy + j / 3 - 1;
                        const double v = (i == j ? 1.0 : 0.0) -
                                         (1.0 + d[i][0] * md[j][0] + d[i][1] * md[j][1] + d[i][2] * md[j][2]) / 9.0;
                        row[(yj - yi + 2) * 5 + (xj - xi + 2)] += v;
                    }
                }
            }
        }
        // L_uu x = -L_uk a_k, by conjugate gradients with the diagonal as
        // the preconditioner, from the caller's alpha as the first guess.
        std::vector<double> x(u), r(u), z(u), q(u), s(u), diag(u);
        for (size_t k = 0; k < u; k++) {
            const int px = static_cast<int>(unknown[k] % w), py = static_cast<int>(unknown[k] / w);
            const double *row = &L[k * 25];
            double rhs = 0;
            for (int o = 0; o < 25; o++) {
                if (row[o] == 0) continue;
                const size_t pj = static_cast<size_t>(py + o / 5 - 2) * w + (px + o % 5 - 2);
                if (index[pj] < 0) rhs -= row[o] * (alpha[pj] / 255.0);
            }
            r[k] = rhs;
            x[k] = alpha[unknown[k]] / 255.0;
            diag[k] = row[12] > 1e-12 ? row[12] : 1.0;
        }
        // L_uu in compressed rows (the unknown neighbours only).
        std::vector<size_t> rowStart(u + 1, 0);
        std::vector<int> column;
        std::vector<double> value;
        column.reserve(u * 25);
        value.reserve(u * 25);
        for (size_t k = 0; k < u; k++) {
            const int px = static_cast<int>(unknown[k] % w), py = static_cast<int>(unknown[k] / w);
            const double *row = &L[k * 25];
            for (int o = 0; o < 25; o++) {
                if (row[o] == 0) continue;
                const int kj = index[static_cast<size_t>(py + o / 5 - 2) * w + (px + o % 5 - 2)];
                if (kj >= 0) { column.push_back(kj); value.push_back(row[o]); }
            }
            rowStart[k + 1] = column.size();
        }
        auto apply = [&](const std::vector<double> &v, std::vector<double> &out) {
            for (size_t k = 0; k < u; k++) {
                double sum = 0;
                for (size_t e = rowStart[k]; e < rowStart[k + 1]; e++) sum += value[e] * v[column[e]];
                out[k] = sum;
            }
        };
        apply(x, q);
        double norm0 = 0;
        for (size_t k = 0; k < u; k++) { norm0 += r[k] * r[k]; r[k] -= q[k]; }
        for (size_t k = 0; k < u; k++) { z[k] = r[k] / diag[k]; s[k] = z[k]; }
        double rz = 0;
        for (size_t k = 0; k < u; k++) rz += r[k] * z[k];
        const double tolerance = 1e-8 * std::max(norm0, 1e-12);
        for (int it = 0; it < iterations; it++) {
            double rr = 0;
            for (size_t k = 0; k < u; k++) rr += r[k] * r[k];
            if (rr <= tolerance) break;
            apply(s, q);
            double sq = 0;
            for (size_t k = 0; k < u; k++) sq += s[k] * q[k];
            if (!(sq > 0)) break;
            const double step = rz / sq;
            for (size_t k = 0; k < u; k++) { x[k] += step * s[k]; r[k] -= step * q[k]; z[k] = r[k] / diag[k]; }
            double rzNext = 0;
            for (size_t k = 0; k < u; k++) rzNext += r[k] * z[k];
            const double beta = rzNext / rz;
            rz = rzNext;
            for (size_t k = 0; k < u; k++) s[k] = z[k] + beta * s[k];
        }
        for (size_t k = 0; k < u; k++) {
            const double v = std::min(1.0, std::max(0.0, x[k]));
            alpha[unknown[k]] = static_cast<uint8_t>(std::lround(v * 255.0));
        }
        return 0;
    });
}

extern "C" int wobble_matte_guided(const uint8_t *rgb, int width, int height, size_t stride, const uint8_t *known,
                                   uint8_t *alpha, int radius, double epsilon, char *error, size_t errorSize) {
    return guarded(error, errorSize, "guided matte", [&]() -> int {
        if (width <= 0 || height <= 0 || radius <= 0) {
            describe(error, errorSize, "guided matte: empty picture or no radius");
            return -1;
        }
        Reproducible reproducible;
        cv::Mat image(height, width, CV_8UC3, const_cast<uint8_t *>(rgb), stride);
        cv::Mat I;
        image.convertTo(I, CV_64FC3, 1.0 / 255.0);
        cv::Mat a8(height, width, CV_8UC1, alpha, static_cast<size_t>(width)), p;
        a8.convertTo(p, CV_64F, 1.0 / 255.0);
        const cv::Size box(2 * radius + 1, 2 * radius + 1);
        auto mean = [&](const cv::Mat &m) {
            cv::Mat out;
            cv::boxFilter(m, out, CV_64F, box, cv::Point(-1, -1), true, cv::BORDER_REFLECT);
            return out;
        };
        std::vector<cv::Mat> ch;
        cv::split(I, ch);
        cv::Mat mI[3], mIp[3], var[3][3], mp = mean(p);
        for (int c = 0; c < 3; c++) { mI[c] = mean(ch[c]); mIp[c] = mean(ch[c].mul(p)); }
        for (int a = 0; a < 3; a++)
            for (int b = a; b < 3; b++) var[a][b] = var[b][a] = mean(ch[a].mul(ch[b])) - mI[a].mul(mI[b]);
        cv::Mat A[3];
        for (int c = 0; c < 3; c++) A[c] = cv::Mat(height, width, CV_64F);
        for (int y = 0; y < height; y++) {
            for (int x = 0; x < width; x++) {
                double m[9], inv[9], cv3[3];
                for (int a = 0; a < 3; a++) {
                    for (int b = 0; b < 3; b++) m[a * 3 + b] = var[a][b].at<double>(y, x) + (a == b ? epsilon : 0);
                    cv3[a] = mIp[a].at<double>(y, x) - mI[a].at<double>(y, x) * mp.at<double>(y, x);
                }
                if (!invert3(m, inv)) { for (int c = 0; c < 3; c++) A[c].at<double>(y, x) = 0; continue; }
                for (int a = 0; a < 3; a++) A[a].at<double>(y, x) = inv[a * 3] * cv3[0] + inv[a * 3 + 1] * cv3[1] + inv[a * 3 + 2] * cv3[2];
            }
        }
        cv::Mat B = mp - A[0].mul(mI[0]) - A[1].mul(mI[1]) - A[2].mul(mI[2]);
        cv::Mat q = mean(B);
        for (int c = 0; c < 3; c++) q += mean(A[c]).mul(ch[c]);
        for (int y = 0; y < height; y++)
            for (int x = 0; x < width; x++) {
                const size_t k = static_cast<size_t>(y) * width + x;
                if (known[k] != 0) continue;
                const double v = std::min(1.0, std::max(0.0, q.at<double>(y, x)));
                alpha[k] = static_cast<uint8_t>(std::lround(v * 255.0));
            }
        return 0;
    });
}

extern "C" int wobble_foreground_background(const uint8_t *rgb, int width, int height, size_t stride, const uint8_t *alpha,
                                            uint8_t *foreground, uint8_t *background, char *error, size_t errorSize) {
    return guarded(error, errorSize, "foreground", [&]() -> int {
        if (width <= 0 || height <= 0) {
            describe(error, errorSize, "foreground: empty picture");
            return -1;
        }
        const int w0 = width, h0 = height;
        const double regularization = 1e-5, gradientWeight = 1.0;
        const int smallIterations = 10, bigIterations = 2, smallSize = 32;
        // The first level: one pixel, the mean colours of the object and of
        // the background (weighted by alpha).
        std::vector<double> F(3, 0.0), B(3, 0.0);
        {
            double fa = 0, ba = 0;
            for (int y = 0; y < h0; y++)
                for (int x = 0; x < w0; x++) {
                    const double a = alpha[static_cast<size_t>(y) * w0 + x] / 255.0;
                    fa += a; ba += 1 - a;
                    for (int c = 0; c < 3; c++) {
                        const double v = rgb[static_cast<size_t>(y) * stride + static_cast<size_t>(x) * 3 + c] / 255.0;
                        F[c] += a * v; B[c] += (1 - a) * v;
                    }
                }
            for (int c = 0; c < 3; c++) { F[c] = fa > 0 ? F[c] / fa : 0.5; B[c] = ba > 0 ? B[c] / ba : 0.5; }
        }
        int wPrev = 1, hPrev = 1;
        const int levels = static_cast<int>(std::ceil(std::log2(static_cast<double>(std::max(w0, h0)))));
        std::vector<double> image, a, Fn, Bn;
        for (int level = levels > 0 ? 1 : 0; level <= levels; level++) {
            const int w = levels > 0 ? std::max(1, static_cast<int>(std::lround(std::pow(static_cast<double>(w0), static_cast<double>(level) / levels)))) : w0;
            const int h = levels > 0 ? std::max(1, static_cast<int>(std::lround(std::pow(static_cast<double>(h0), static_cast<double>(level) / levels)))) : h0;
            const size_t n = static_cast<size_t>(w) * h;
            image.assign(n * 3, 0); a.assign(n, 0); Fn.assign(n * 3, 0); Bn.assign(n * 3, 0);
            for (int y = 0; y < h; y++) {
                const int sy = std::min(h0 - 1, static_cast<int>(static_cast<long long>(y) * h0 / h));
                const int py = std::min(hPrev - 1, static_cast<int>(static_cast<long long>(y) * hPrev / h));
                for (int x = 0; x < w; x++) {
                    const int sx = std::min(w0 - 1, static_cast<int>(static_cast<long long>(x) * w0 / w));
                    const int px = std::min(wPrev - 1, static_cast<int>(static_cast<long long>(x) * wPrev / w));
                    const size_t k = static_cast<size_t>(y) * w + x, kp = static_cast<size_t>(py) * wPrev + px;
                    a[k] = alpha[static_cast<size_t>(sy) * w0 + sx] / 255.0;
                    for (int c = 0; c < 3; c++) {
                        image[k * 3 + c] = rgb[static_cast<size_t>(sy) * stride + static_cast<size_t>(sx) * 3 + c] / 255.0;
                        Fn[k * 3 + c] = F[kp * 3 + c];
                        Bn[k * 3 + c] = B[kp * 3 + c];
                    }
                }
            }
            const int rounds = (w <= smallSize && h <= smallSize) ? smallIterations : bigIterations;
            static const int dx[4] = {-1, 1, 0, 0}, dy[4] = {0, 0, -1, 1};
            for (int round = 0; round < rounds; round++) {
                for (int y = 0; y < h; y++) {
                    for (int x = 0; x < w; x++) {
                        const size_t k = static_cast<size_t>(y) * w + x;
                        const double a0 = a[k], a1 = 1 - a0;
                        double a00 = a0 * a0, a01 = a0 * a1, a11 = a1 * a1;
                        double b0[3], b1[3];
                        for (int c = 0; c < 3; c++) { b0[c] = a0 * image[k * 3 + c]; b1[c] = a1 * image[k * 3 + c]; }
                        for (int d = 0; d < 4; d++) {
                            const int x2 = std::min(w - 1, std::max(0, x + dx[d])), y2 = std::min(h - 1, std::max(0, y + dy[d]));
                            const size_t k2 = static_cast<size_t>(y2) * w + x2;
                            const double da = regularization + gradientWeight * std::fabs(a0 - a[k2]);
                            a00 += da; a11 += da;
                            for (int c = 0; c < 3; c++) { b0[c] += da * Fn[k2 * 3 + c]; b1[c] += da * Bn[k2 * 3 + c]; }
                        }
                        const double inv = 1.0 / (a00 * a11 - a01 * a01);
                        const double m00 = inv * a11, m01 = -inv * a01, m11 = inv * a00;
                        for (int c = 0; c < 3; c++) {
                            Fn[k * 3 + c] = std::min(1.0, std::max(0.0, m00 * b0[c] + m01 * b1[c]));
                            Bn[k * 3 + c] = std::min(1.0, std::max(0.0, m01 * b0[c] + m11 * b1[c]));
                        }
                    }
                }
            }
            F.swap(Fn); B.swap(Bn);
            wPrev = w; hPrev = h;
        }
        for (size_t k = 0; k < static_cast<size_t>(w0) * h0; k++)
            for (int c = 0; c < 3; c++) {
                foreground[k * 3 + c] = static_cast<uint8_t>(std::lround(F[k * 3 + c] * 255.0));
                background[k * 3 + c] = static_cast<uint8_t>(std::lround(B[k * 3 + c] * 255.0));
            }
        return 0;
    });
}

// The magnetic outline (the studio's manual cutout): OpenCV's intelligent
// scissors between each pair of anchors, on the anchors' box and a margin.
extern "C" int wobble_magnetic_outline(const uint8_t *rgb, int width, int height, size_t stride, const int32_t *anchors,
                                       int count, int margin, int32_t *path, int capacity, int *pathCount, uint8_t *mask,
                                       char *error, size_t errorSize) {
    return guarded(error, errorSize, "magnetic outline", [&]() -> int {
        if (width <= 0 || height <= 0 || count < 3 || margin < 0 || capacity <= 0) {
            describe(error, errorSize, "magnetic outline: an empty image or fewer than three points");
            return -1;
        }
        int x0 = width, y0 = height, x1 = 0, y1 = 0;
        for (int i = 0; i < count; i++) {
            int x = anchors[2 * i], y = anchors[2 * i + 1];
            if (x < 0 || y < 0 || x >= width || y >= height) {
                describe(error, errorSize, "magnetic outline: a point lies outside the image");
                return -1;
            }
            x0 = std::min(x0, x); y0 = std::min(y0, y); x1 = std::max(x1, x + 1); y1 = std::max(y1, y + 1);
        }
        x0 = std::max(0, x0 - margin); y0 = std::max(0, y0 - margin);
        x1 = std::min(width, x1 + margin); y1 = std::min(height, y1 + margin);
        Reproducible reproducible;
        cv::Mat image(height, width, CV_8UC3, const_cast<uint8_t *>(rgb), stride);
        cv::Rect box(x0, y0, x1 - x0, y1 - y0);
        cv::Mat crop = image(box).clone();
        cv::segmentation::IntelligentScissorsMB scissors;
        scissors.setEdgeFeatureCannyParameters(32, 100);
        scissors.setGradientMagnitudeMaxLimit(200);
        scissors.applyImage(crop);
        std::vector<cv::Point> outline;
        for (int i = 0; i < count; i++) {
            cv::Point from(anchors[2 * i] - x0, anchors[2 * i + 1] - y0);
            cv::Point to(anchors[2 * ((i + 1) % count)] - x0, anchors[2 * ((i + 1) % count) + 1] - y0);
            scissors.buildMap(from);
            std::vector<cv::Point> piece;
            scissors.getContour(to, piece, false);
            if (piece.empty()) piece.push_back(to);
            // From `from` to `to`, whichever order OpenCV gave.
            if (piece.front() != from && piece.back() == from) std::reverse(piece.begin(), piece.end());
            for (const cv::Point &p : piece) {
                if (outline.empty() || outline.back() != p) outline.push_back(p);
            }
        }
        if (outline.size() > 1 && outline.front() == outline.back()) outline.pop_back();
        cv::Mat filled(box.height, box.width, CV_8UC1, cv::Scalar(0));
        std::vector<std::vector<cv::Point>> polygons{outline};
        cv::fillPoly(filled, polygons, cv::Scalar(255), cv::LINE_8);
        cv::Mat full(height, width, CV_8UC1, mask, static_cast<size_t>(width));
        full.setTo(cv::Scalar(0));
        filled.copyTo(full(box));
        int n = 0;
        for (const cv::Point &p : outline) {
            if (n >= capacity) break;
            path[2 * n] = p.x + x0;
            path[2 * n + 1] = p.y + y0;
            n++;
        }
        *pathCount = static_cast<int>(outline.size());
        return 0;
    });
}
