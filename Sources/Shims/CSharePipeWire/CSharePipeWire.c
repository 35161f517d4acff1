#include "CSharePipeWire.h"
#include <spa/pod/builder.h>

int CSharePipeWire_loop_iterate(struct pw_loop *loop, int timeout) { return pw_loop_iterate(loop, timeout); }

const struct spa_pod *CSharePipeWire_build_raw_format(uint8_t *buffer, uint32_t size, uint32_t format,
                                                      uint32_t width, uint32_t height,
                                                      uint32_t maxWidth, uint32_t maxHeight,
                                                      uint32_t fpsNum, uint32_t maxFpsNum) {
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, size);
    return spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat,
        SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
        SPA_FORMAT_mediaSubtype, SPA_POD_Id(SPA_MEDIA_SUBTYPE_raw),
        SPA_FORMAT_VIDEO_format, SPA_POD_Id(format),
        SPA_FORMAT_VIDEO_size, SPA_POD_CHOICE_RANGE_Rectangle(
            &SPA_RECTANGLE(width, height), &SPA_RECTANGLE(1, 1), &SPA_RECTANGLE(maxWidth, maxHeight)),
        SPA_FORMAT_VIDEO_framerate, SPA_POD_CHOICE_RANGE_Fraction(
            &SPA_FRACTION(fpsNum, 1), &SPA_FRACTION(0, 1), &SPA_FRACTION(maxFpsNum, 1)));
}

int CSharePipeWire_region_is_valid(const struct spa_meta_region *region) { return spa_meta_region_is_valid(region); }

const char *CSharePipeWire_headers_version(void) { return pw_get_headers_version(); }
