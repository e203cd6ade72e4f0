// What vision.cpp and fill.cpp share: the error line, and OpenCV run the
// same on every machine. Not part of the module's header.
#pragma once

#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>

#include <cstddef>
#include <cstdio>

namespace wobble_vision {

/// Puts `what` in the caller's error buffer (one line).
inline void describe(char *error, size_t size, const char *what) {
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

}  // namespace wobble_vision
