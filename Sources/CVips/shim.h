#ifndef SNIFFMEET_CVIPS_SHIM_H
#define SNIFFMEET_CVIPS_SHIM_H
// libvips for the Photos module. libvips' operations take their optional arguments as C
// varargs, which Swift cannot call, so each call the server makes is a fixed-argument inline
// function here. Every function returns 0 on success and -1 on failure (the message is in
// vips_error_buffer()); every VipsImage it hands out is the caller's to g_object_unref, every
// buffer the caller's to g_free.
#include <vips/vips.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

// The image formats the server accepts, as the Photos module numbers them.
enum {
    SM_VIPS_JPEG = 1,
    SM_VIPS_PNG = 2,
    SM_VIPS_WEBP = 3,
    SM_VIPS_HEIF = 4,
};

// libvips' warnings (a corrupt upload can make thousands: "error in tile ...") go nowhere: the
// request's answer says what went wrong, and they would fill the server's log at a client's will.
static inline void sm_vips_drop_log(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {
    (void)domain, (void)level, (void)message, (void)data;
}

// Starts libvips once per process, locked down for client bytes: no operation cache (it would
// keep decoded images and buffers alive), nothing marked untrusted, and no loader at all but
// JPEG, PNG, WebP and HEIF (Debian's build also carries ImageMagick, PDF, SVG, TIFF, FITS, ...
// loaders that must never see what a client sends).
static inline int sm_vips_start(void) {
    if (VIPS_INIT("sniffmeet")) return -1;
    g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO | G_LOG_LEVEL_DEBUG,
                      sm_vips_drop_log, NULL);
    vips_cache_set_max(0);
    vips_cache_set_max_mem(0);
    vips_cache_set_max_files(0);
    vips_block_untrusted_set(TRUE);
    vips_operation_block_set("VipsForeignLoad", TRUE);
    vips_operation_block_set("VipsForeignLoadJpeg", FALSE);
    vips_operation_block_set("VipsForeignLoadPng", FALSE);
    vips_operation_block_set("VipsForeignLoadWebp", FALSE);
    vips_operation_block_set("VipsForeignLoadHeif", FALSE);
    return 0;
}

// glibc's allocator, tuned for libvips' large short-lived blocks (see `Vips.started`): a fixed
// mmap threshold, so big blocks are mapped and returned when freed; and a trim after each job.
static inline void sm_malloc_fixed_mmap_threshold(int bytes) {
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, bytes);
#endif
}
static inline void sm_malloc_trim(void) {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

// The loader of `format` on `buf`, reading only the header: pixels are decoded later, and only
// if the caller asks for them. Sequential access; truncated or corrupt data fails the read.
static inline int sm_vips_header(int format, const void *buf, size_t len, VipsImage **out) {
    void *data = (void *)buf;
    switch (format) {
    case SM_VIPS_JPEG:
        return vips_jpegload_buffer(data, len, out, "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_ERROR, NULL);
    case SM_VIPS_PNG:
        return vips_pngload_buffer(data, len, out, "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_ERROR, NULL);
    case SM_VIPS_WEBP:
        return vips_webpload_buffer(data, len, out, "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_ERROR, NULL);
    case SM_VIPS_HEIF:
        return vips_heifload_buffer(data, len, out, "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_ERROR, NULL);
    default:
        vips_error("sniffmeet", "unknown format %d", format);
        return -1;
    }
}

// `buf` decoded, turned upright by its orientation tag and shrunk to fit `size` x `size`
// (never enlarged), with shrink-on-load where the format has it (JPEG's DCT scaling, HEIF's
// embedded thumbnail when big enough). Lazy: the pixels are computed by whoever reads `out`.
static inline int sm_vips_fit(const void *buf, size_t len, int size, VipsImage **out) {
    return vips_thumbnail_buffer((void *)buf, len, out, size, "height", size, "size", VIPS_SIZE_DOWN,
                                 "option_string", "fail_on=error", NULL);
}

// `in` as 8-bit sRGB without alpha (transparent parts on white), ready for JPEG.
static inline int sm_vips_jpeg_ready(VipsImage *in, VipsImage **out) {
    VipsImage *srgb = NULL;
    if (vips_colourspace(in, &srgb, VIPS_INTERPRETATION_sRGB, NULL)) return -1;
    VipsImage *flat = NULL;
    if (vips_image_hasalpha(srgb)) {
        VipsArrayDouble *white = vips_array_double_newv(3, 255.0, 255.0, 255.0);
        int failed = vips_flatten(srgb, &flat, "background", white, NULL);
        vips_area_unref(VIPS_AREA(white));
        g_object_unref(srgb);
        if (failed) return -1;
    } else {
        flat = srgb;
    }
    int failed = vips_cast_uchar(flat, out, NULL);
    g_object_unref(flat);
    return failed;
}

// A `size` x `size` crop of the centre of `in`, scaled so that the shorter side fills it.
static inline int sm_vips_square(VipsImage *in, int size, VipsImage **out) {
    return vips_thumbnail_image(in, out, size, "height", size, "crop", VIPS_INTERESTING_CENTRE, NULL);
}

// `in` as a baseline JPEG with no metadata at all (EXIF, XMP, IPTC, ICC, comments).
static inline int sm_vips_jpeg(VipsImage *in, int quality, void **buf, size_t *len) {
    return vips_jpegsave_buffer(in, buf, len, "Q", quality, "strip", TRUE, "optimize_coding", TRUE, NULL);
}

// MARK: Synthetic images (benchmarks and tests make their inputs with the same library)

// A `width` x `height` sRGB picture: colour gradients with some grain, so that encoders see
// something like a photo rather than flat colour or pure noise. `alpha` adds an alpha band.
static inline int sm_vips_synthetic(int width, int height, int alpha, VipsImage **out) {
    VipsImage *xyz = NULL, *x = NULL, *y = NULL, *r = NULL, *g = NULL, *b = NULL, *noise = NULL;
    VipsImage *joined = NULL, *grainy = NULL;
    int failed = vips_xyz(&xyz, width, height, NULL)
        || vips_extract_band(xyz, &x, 0, NULL)
        || vips_extract_band(xyz, &y, 1, NULL)
        || vips_linear1(x, &r, 255.0 / (width > 1 ? width - 1 : 1), 0.0, NULL)
        || vips_linear1(y, &g, 255.0 / (height > 1 ? height - 1 : 1), 0.0, NULL)
        || vips_add(x, y, &b, NULL);
    if (!failed) {
        VipsImage *bands[3] = {r, g, b};
        failed = vips_bandjoin(bands, &joined, 3, NULL)
            || vips_gaussnoise(&noise, width, height, "sigma", 3.0, "mean", 0.0, NULL)
            || vips_add(joined, noise, &grainy, NULL);
    }
    if (!failed) {
        VipsImage *wrapped = NULL, *cast = NULL;
        // b wraps around every 256 px, giving edges as well as gradients.
        failed = vips_remainder_const1(grainy, &wrapped, 256.0, NULL) || vips_cast_uchar(wrapped, &cast, NULL);
        if (wrapped) g_object_unref(wrapped);
        if (!failed) {
            if (alpha) {
                failed = vips_bandjoin_const1(cast, out, 200.0, NULL);
                g_object_unref(cast);
            } else {
                *out = cast;
            }
            if (!failed) (*out)->Type = VIPS_INTERPRETATION_sRGB;
        }
    }
    VipsImage *all[] = {xyz, x, y, r, g, b, noise, joined, grainy};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        if (all[i]) g_object_unref(all[i]);
    return failed ? -1 : 0;
}

// `in` encoded as `format` (SM_VIPS_*), or as GIF for `format` 0, keeping no metadata.
// `pages` > 1 stacks that many copies as frames of an animation (GIF) or images (HEIF); this
// libvips (8.14 on Debian) writes only the first of them to WebP.
static inline int sm_vips_encode(VipsImage *in, int format, int quality, int pages, void **buf, size_t *len) {
    VipsImage *image = in;
    g_object_ref(image);
    if (pages > 1) {
        VipsImage *stack[64];
        int count = pages > 64 ? 64 : pages;
        for (int i = 0; i < count; i++) stack[i] = in;
        VipsImage *tall = NULL;
        if (vips_arrayjoin(stack, &tall, count, "across", 1, NULL)) {
            g_object_unref(image);
            return -1;
        }
        g_object_unref(image);
        image = tall;
        vips_image_set_int(image, "page-height", in->Ysize);
        vips_image_set_int(image, "n-pages", count);
        int delays[64];
        for (int i = 0; i < count; i++) delays[i] = 100;
        vips_image_set_array_int(image, "delay", delays, count);
    }
    int failed;
    switch (format) {
    case SM_VIPS_JPEG: failed = vips_jpegsave_buffer(image, buf, len, "Q", quality, NULL); break;
    case SM_VIPS_PNG: failed = vips_pngsave_buffer(image, buf, len, "compression", 1, NULL); break;
    case SM_VIPS_WEBP: failed = vips_webpsave_buffer(image, buf, len, "Q", quality, NULL); break;
    case SM_VIPS_HEIF:
        failed = vips_heifsave_buffer(image, buf, len, "Q", quality, "compression", VIPS_FOREIGN_HEIF_COMPRESSION_HEVC, NULL);
        break;
    case 0: failed = vips_gifsave_buffer(image, buf, len, NULL); break;
    default:
        vips_error("sniffmeet", "unknown format %d", format);
        failed = -1;
    }
    g_object_unref(image);
    return failed ? -1 : 0;
}

#endif
