// Thin shims over PipeWire/SPA helpers that are macros, variadic or static inline with
// macro arguments, which Swift cannot import.
#pragma once
#include <stdint.h>
#include <pipewire/pipewire.h>
#include <spa/param/video/format-utils.h>
#include <spa/buffer/meta.h>

// pw_loop_* are macros over the loop's method table.
int CSharePipeWire_loop_iterate(struct pw_loop *loop, int timeout);
// spa_pod_builder_add_object is variadic: build an EnumFormat for one raw video format
// with a size range and a frame-rate range.
const struct spa_pod *CSharePipeWire_build_raw_format(uint8_t *buffer, uint32_t size, uint32_t format,
                                                      uint32_t width, uint32_t height,
                                                      uint32_t maxWidth, uint32_t maxHeight,
                                                      uint32_t fpsNum, uint32_t maxFpsNum);
// spa_meta_*_is_valid are macros.
int CSharePipeWire_region_is_valid(const struct spa_meta_region *region);
// The version macro of the headers we were built against.
const char *CSharePipeWire_headers_version(void);
