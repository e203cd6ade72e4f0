// The only caller of OpenCV (see include/wobble_vision.h for why each
// function exists). Exceptions never leave this file: each becomes -1 and
// one line in the caller's buffer.
#include "wobble_vision.h"

#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/imgproc/segmentation.hpp>
#include <opencv2/photo.hpp>

#include <algorithm>
#include <vector>

#include <cstdio>
#include <cstring>
#include <exception>

namespace {

void describe(char *error, size_t size, const char *what) {
    if (error != nullptr && size > 0) {
        std::snprintf(error, size, "%s", what);
    }
}

/// Runs OpenCV with its worker threads off (results that cannot depend on
/// how work is split) and its CPU-dispatched optimisations off (the same
/// arithmetic on every machine), and puts both back afterwards.
struct Reproducible {
    int threads;
    bool optimized;
    Reproducible() : threads(cv::getNumThreads()), optimized(cv::useOptimized()) {
        cv::setNumThreads(1);
        cv::setUseOptimized(false);
    }
    ~Reproducible() {
        cv::setUseOptimized(optimized);
        cv::setNumThreads(threads);
    }
};

}  // namespace

extern "C" int wobble_grabcut(const uint8_t *rgb, int width, int height, size_t stride, uint8_t *labels, int iterations,
                              char *error, size_t errorSize) {
    try {
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
    } catch (const cv::Exception &e) {
        describe(error, errorSize, (e.func + ": " + e.err).c_str());
    } catch (const std::exception &e) {
        describe(error, errorSize, e.what());
    } catch (...) {
        describe(error, errorSize, "grabCut: unknown error");
    }
    return -1;
}

extern "C" int wobble_inpaint(uint8_t *rgb, int width, int height, size_t stride, const uint8_t *mask, double radius,
                              char *error, size_t errorSize) {
    try {
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
    } catch (const cv::Exception &e) {
        describe(error, errorSize, (e.func + ": " + e.err).c_str());
    } catch (const std::exception &e) {
        describe(error, errorSize, e.what());
    } catch (...) {
        describe(error, errorSize, "inpaint: unknown error");
    }
    return -1;
}

// The magnetic outline (the studio's manual cutout): OpenCV's intelligent
// scissors between each pair of anchors, on the anchors' box and a margin.
extern "C" int wobble_magnetic_outline(const uint8_t *rgb, int width, int height, size_t stride, const int32_t *anchors,
                                       int count, int margin, int32_t *path, int capacity, int *pathCount, uint8_t *mask,
                                       char *error, size_t errorSize) {
    try {
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
    } catch (const cv::Exception &e) {
        describe(error, errorSize, (e.func + ": " + e.err).c_str());
    } catch (const std::exception &e) {
        describe(error, errorSize, e.what());
    } catch (...) {
        describe(error, errorSize, "magnetic outline: unknown error");
    }
    return -1;
}
