// The only caller of OpenCV (see include/wobble_vision.h for why each
// function exists). Exceptions never leave this file: each becomes -1 and
// one line in the caller's buffer.
#include "wobble_vision.h"

#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/photo.hpp>

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
