// Thin shims over PipeWire/SPA helpers that are macros, variadic or static inline with
// macro arguments, which Swift cannot import.
#pragma once
#include <stdint.h>
#include <pipewire/pipewire.h>
#include <spa/param/video/format-utils.h>
#include <spa/buffer/meta.h>

// The version macro of the headers we were built against.
const char *CSharePipeWire_headers_version(void);

// --- Capture stream (screen capture consumer) ---

// What the consumer asks for, each as a preferred value and a range. The Swift caller chooses
// them (ScreenCapture's PipeWireCapture.StreamParameters); the shim only writes them into pods.
struct CSharePipeWire_capture_params {
    uint32_t width, height, min_width, min_height, max_width, max_height;  // picture size
    uint32_t fps, min_fps, max_fps;                                         // frames per second
    uint32_t buffers, min_buffers, max_buffers;                             // buffers in the pool
    uint32_t cursor_side, max_cursor_side;  // cursor bitmap room (4 bytes a pixel), pixels a side
};

// spa_pod_builder_add_object is variadic: the EnumFormat params a screen consumer offers. With
// modifiers, one DMA-BUF EnumFormat per format comes first (modifier mandatory, not fixated);
// then one SHM EnumFormat with all formats. Returns how many params were written to `params`.
int CSharePipeWire_build_capture_formats(uint8_t *buffer, uint32_t size, const struct spa_pod **params,
                                         uint32_t max_params, const uint32_t *formats, uint32_t n_formats,
                                         const uint64_t *modifiers, uint32_t n_modifiers,
                                         const struct CSharePipeWire_capture_params *p);
// Buffers (data types as a bit mask of SPA_DATA_*) and the metadata we want: header, crop,
// damage regions (as many as CSharePipeWire_buffer_info holds), cursor with its bitmap.
int CSharePipeWire_build_capture_buffers(uint8_t *buffer, uint32_t size, const struct spa_pod **params,
                                         uint32_t max_params, uint32_t data_types,
                                         const struct CSharePipeWire_capture_params *p);

// spa_format_parse and spa_format_video_raw_parse are inline over SPA_POD macros.
struct CSharePipeWire_video_format {
    uint32_t format, width, height, fps_num, fps_den;
    int has_modifier;
    uint64_t modifier;
};
int CSharePipeWire_parse_video_format(const struct spa_pod *param, struct CSharePipeWire_video_format *out);

// What one dequeued buffer holds: spa_buffer_find_meta_data, the meta validity macros and
// SPA_PTROFF for the cursor bitmap are inline/macros.
#define CSHAREPIPEWIRE_MAX_DAMAGE 16
struct CSharePipeWire_rect { int32_t x, y; uint32_t width, height; };
struct CSharePipeWire_buffer_info {
    void *data;              // mapped plane 0, or NULL
    uint32_t data_type;      // SPA_DATA_*
    int64_t fd;
    uint32_t maxsize, mapoffset;
    uint32_t offset, size;   // chunk
    int32_t stride;
    int corrupted;           // header or chunk flag
    int has_crop;
    struct CSharePipeWire_rect crop;
    int damage_present;      // damage meta exists on the buffer
    uint32_t damage_count;   // valid regions (0 with damage_present: nothing changed)
    struct CSharePipeWire_rect damage[CSHAREPIPEWIRE_MAX_DAMAGE];
    int cursor_valid;
    int32_t cursor_x, cursor_y, hotspot_x, hotspot_y;
    int cursor_has_bitmap;
    uint32_t bitmap_format, bitmap_width, bitmap_height;
    int32_t bitmap_stride;
    const uint8_t *bitmap;
};
void CSharePipeWire_read_buffer(struct spa_buffer *buffer, struct CSharePipeWire_buffer_info *out);

// DMA_BUF_IOCTL_SYNC is an ioctl macro: bracket CPU reads of a mapped DMA-BUF (start 1: begin a
// read, 0: end it). Returns 0 or -errno.
int CSharePipeWire_dmabuf_sync(int fd, int start);

// --- Audio streams (call playout and microphone capture) ---

// spa_format_audio_raw_build is inline over SPA_AUDIO_INFO_RAW_INIT: an EnumFormat for
// interleaved signed 16-bit native-endian samples at `rate` with 1 (MONO) or 2 (FL FR) channels.
const struct spa_pod *CSharePipeWire_build_audio_format(uint8_t *buffer, uint32_t size, uint32_t rate,
                                                        uint32_t channels);
// pw_core_get_registry and pw_registry_add_listener are macros over method tables.
struct pw_registry *CSharePipeWire_core_get_registry(struct pw_core *core);
int CSharePipeWire_registry_add_listener(struct pw_registry *registry, struct spa_hook *hook,
                                         const struct pw_registry_events *events, void *data);

// --- The echo-cancel module (loaded into our own context) ---

// pw_context_load_module is declared in <pipewire/impl-module.h>, which <pipewire/pipewire.h>
// leaves out; the module handle stays opaque to Swift (the context's destruction unloads it).
struct pw_impl_module;
struct pw_impl_module *CSharePipeWire_load_module(struct pw_context *context, const char *name, const char *args);
