// OpenCV behind a tiny C interface: the only code in the tree that calls
// OpenCV (imgproc's grabCut, photo's inpaint), and the cutout's matting
// and the plate's texture fill (plain C++ beside it, in fill.cpp). C stays at this edge:
// Swift calls these only through WobbleVision (Vision.swift), which checks
// every result. No OpenCV type crosses it: plain byte buffers only.
#ifndef WOBBLE_VISION_H
#define WOBBLE_VISION_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// GrabCut labels, as OpenCV's GC_BGD, GC_FGD, GC_PR_BGD, GC_PR_FGD.
enum { WOBBLE_GC_BACKGROUND = 0, WOBBLE_GC_OBJECT = 1, WOBBLE_GC_PROBABLY_BACKGROUND = 2, WOBBLE_GC_PROBABLY_OBJECT = 3 };

/// Why: GrabCut (cv::grabCut) is the segmentation `addSketch{cutout =
/// "auto"}` and `wobble-run cutout` use; it is C++ and takes cv::Mat.
///
/// Segments the `width × height` RGB image `rgb` (3 bytes a pixel, rows
/// `stride` bytes apart) starting from `labels` (one WOBBLE_GC_* byte a
/// pixel, `width` bytes a row), which it refines in place over
/// `iterations` rounds. Deterministic: OpenCV's random generator is
/// seeded with a fixed value and its worker threads are turned off for
/// the call. Returns 0, or -1 with a one-line reason in `error`.
int wobble_grabcut(const uint8_t *rgb, int width, int height, size_t stride, uint8_t *labels, int iterations,
                   char *error, size_t errorSize);

/// Why: the plate behind a cutout is the picture with the object's area
/// filled from around it: cv::inpaint (Telea's method), C++ only.
///
/// Fills, in place, the pixels of the `width × height` RGB image `rgb`
/// (3 bytes a pixel, rows `stride` bytes apart) where `mask` (one byte a
/// pixel, `width` bytes a row) is not 0, from the pixels around them,
/// looking `radius` pixels around each. Returns 0, or -1 with a reason.
int wobble_inpaint(uint8_t *rgb, int width, int height, size_t stride, const uint8_t *mask, double radius,
                   char *error, size_t errorSize);

/// Why: Telea's fill carries the hole's border inward along straight lines:
/// a wide hole in a textured picture becomes streaks and a smear. The plate
/// needs texture there: coarse-to-fine patch-based completion (Wexler,
/// Shechtman and Irani 2007, nearest patches by PatchMatch, Barnes et al.
/// 2009), plain C++ (OpenCV's own texture fills, xphoto's shift-map and
/// frequency-selective reconstruction, measured slower and blurrier:
/// docs/DECISIONS.md).
///
/// Fills, in place, the pixels of the `width × height` RGB image `rgb` (3
/// bytes a pixel, rows `stride` bytes apart) where `mask` (one byte a pixel,
/// `width` bytes a row) is not 0, with 7×7 patches of the picture outside
/// the mask, level by level from a coarse one (first guess: Telea's fill).
/// Deterministic (a fixed pseudo-random sequence, one thread, integer
/// sums). Returns 0, or -1 with a reason.
int wobble_fill_texture(uint8_t *rgb, int width, int height, size_t stride, const uint8_t *mask, char *error,
                        size_t errorSize);

/// Why: a cutout's edge is a soft matte, not a hard mask: the alpha of a
/// band of unknown pixels around the object's edge is solved from the
/// colours (closed-form matting, Levin, Lischinski and Weiss 2008: the
/// matting Laplacian of 3×3 windows, solved on the band only by
/// preconditioned conjugate gradients). Plain C++ (OpenCV has no such
/// solver outside its contrib modules).
///
/// `rgb`: the `width × height` picture (3 bytes a pixel, rows `stride`
/// bytes apart, at least 3×3). `known` (one byte a pixel, `width` bytes a
/// row): not 0 where `alpha` is given (0 background, 255 object), 0 where it
/// is unknown. `alpha` (one byte a pixel): read as the first guess on the
/// unknown pixels, which it is overwritten with their solved alpha; known
/// pixels are left as they are. `epsilon`: the windows' regularisation
/// (larger: smoother alpha); `iterations`: at most this many conjugate
/// gradient steps. Deterministic. Returns 0, or -1 with a reason.
int wobble_matte_closed_form(const uint8_t *rgb, int width, int height, size_t stride, const uint8_t *known,
                             uint8_t *alpha, double epsilon, int iterations, char *error, size_t errorSize);

/// Why: the guided-filter matte (He, Sun and Tang 2010: a colour guided
/// filter of the hard mask), measured against the closed-form matte
/// (docs/DECISIONS.md). Same buffers as `wobble_matte_closed_form`; `radius`
/// the filter's window radius, `epsilon` its regularisation.
int wobble_matte_guided(const uint8_t *rgb, int width, int height, size_t stride, const uint8_t *known,
                        uint8_t *alpha, int radius, double epsilon, char *error, size_t errorSize);

/// Why: where a matte is soft the picture mixes the object's colour and
/// the background's; the moving object must carry only its own, the plate
/// only the background: both are estimated (multi-level foreground
/// estimation, Germer, Uelwer, Conrad and Harmeling 2020).
///
/// `rgb` (3 bytes a pixel, rows `stride` apart) and `alpha` (one byte a
/// pixel, `width` bytes a row) in; `foreground` and `background` (3 bytes a
/// pixel, `width * 3` bytes a row) out. Deterministic. Returns 0, or -1.
int wobble_foreground_background(const uint8_t *rgb, int width, int height, size_t stride, const uint8_t *alpha,
                                 uint8_t *foreground, uint8_t *background, char *error, size_t errorSize);

/// Why: the studio's magnetic outline (points clicked along an object's
/// edge, the path between them snapped to the edge) is OpenCV's
/// cv::segmentation::IntelligentScissorsMB (imgproc, C++ only).
///
/// The closed outline through the `count` (at least 3) anchors (`x, y`
/// pairs, pixels of the `width × height` RGB image `rgb`, 3 bytes a pixel,
/// rows `stride` bytes apart): between each anchor and the next (the last
/// and the first too) the cheapest path along edges (Canny edges, gradient
/// magnitude and direction), searched in the anchors' box grown by
/// `margin` pixels. Writes the outline's pixels (`x, y` pairs) into `path`
/// (at most `capacity` of them; `pathCount` says how many it has, which may
/// be more) and fills `mask` (one byte a pixel, `width` bytes a row) with
/// 255 inside the outline and on it, 0 elsewhere. Deterministic (one
/// thread, no CPU-dependent paths). Returns 0, or -1 with a reason.
int wobble_magnetic_outline(const uint8_t *rgb, int width, int height, size_t stride, const int32_t *anchors, int count,
                            int margin, int32_t *path, int capacity, int *pathCount, uint8_t *mask, char *error,
                            size_t errorSize);

#ifdef __cplusplus
}
#endif

#endif
