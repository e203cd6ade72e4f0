// What vision.cpp and fill.cpp share: the error line, exceptions kept in,
// and OpenCV run the same on every machine. Not part of the module's header.
#pragma once

#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>

#include <cstddef>
#include <cstdio>
#include <exception>
#include <mutex>
#include <string>

namespace wobble_vision {

/// Puts `what` in the caller's error buffer (one line).
inline void describe(char *error, size_t size, const char *what) {
    if (error != nullptr && size > 0) {
        std::snprintf(error, size, "%s", what);
    }
}

/// Runs OpenCV with its worker threads off (results that cannot depend on
/// how work is split) and its CPU-dispatched optimisations off (the same
/// arithmetic on every machine), and puts both back afterwards. Both are
/// OpenCV's process-wide settings and a click runs several calls at once
/// (one per thread): the first call in sets them, the last one out puts
/// them back, so no call ever runs with them put back under it.
struct Reproducible {
    Reproducible() {
        std::lock_guard<std::mutex> lock(state().mutex);
        if (state().inside++ == 0) {
            state().threads = cv::getNumThreads();
            state().optimized = cv::useOptimized();
            cv::setNumThreads(1);
            cv::setUseOptimized(false);
        }
    }
    ~Reproducible() {
        std::lock_guard<std::mutex> lock(state().mutex);
        if (--state().inside == 0) {
            cv::setUseOptimized(state().optimized);
            cv::setNumThreads(state().threads);
        }
    }
    Reproducible(const Reproducible &) = delete;
    Reproducible &operator=(const Reproducible &) = delete;

private:
    struct State {
        std::mutex mutex;
        int inside = 0;
        int threads = 1;
        bool optimized = true;
    };
    static State &state() {
        static State s;
        return s;
    }
};

/// Runs `body` (which returns 0, or -1 with its line in `error`); an
/// exception never leaves it: it becomes -1 and one line, named `what`
/// where it carries no message of its own.
template <typename Body>
int guarded(char *error, size_t size, const char *what, Body body) {
    try {
        return body();
    } catch (const cv::Exception &e) {
        describe(error, size, (e.func + ": " + e.err).c_str());
    } catch (const std::exception &e) {
        describe(error, size, e.what());
    } catch (...) {
        describe(error, size, (std::string(what) + ": unknown error").c_str());
    }
    return -1;
}

}  // namespace wobble_vision
