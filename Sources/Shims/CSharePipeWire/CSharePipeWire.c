#include "CSharePipeWire.h"
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/dma-buf.h>
#include <spa/pod/builder.h>
#include <spa/param/buffers.h>

const char *CSharePipeWire_headers_version(void) { return pw_get_headers_version(); }

int CSharePipeWire_build_capture_formats(uint8_t *buffer, uint32_t size, const struct spa_pod **params,
                                         uint32_t max_params, const uint32_t *formats, uint32_t n_formats,
                                         const uint64_t *modifiers, uint32_t n_modifiers,
                                         const struct CSharePipeWire_capture_params *p) {
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, size);
    struct spa_rectangle def = SPA_RECTANGLE(p->width, p->height), min = SPA_RECTANGLE(p->min_width, p->min_height),
                         max = SPA_RECTANGLE(p->max_width, p->max_height);
    struct spa_fraction fdef = SPA_FRACTION(p->fps, 1), fmin = SPA_FRACTION(p->min_fps, 1), fmax = SPA_FRACTION(p->max_fps, 1);
    uint32_t n = 0;
    if (n_formats == 0) return 0;
    for (uint32_t i = 0; n_modifiers > 0 && i < n_formats && n + 1 < max_params; i++) {
        struct spa_pod_frame f[2];
        spa_pod_builder_push_object(&b, &f[0], SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat);
        spa_pod_builder_add(&b, SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
            SPA_FORMAT_mediaSubtype, SPA_POD_Id(SPA_MEDIA_SUBTYPE_raw),
            SPA_FORMAT_VIDEO_format, SPA_POD_Id(formats[i]), 0);
        spa_pod_builder_prop(&b, SPA_FORMAT_VIDEO_modifier, SPA_POD_PROP_FLAG_MANDATORY | SPA_POD_PROP_FLAG_DONT_FIXATE);
        spa_pod_builder_push_choice(&b, &f[1], SPA_CHOICE_Enum, 0);
        spa_pod_builder_long(&b, (int64_t)modifiers[0]);  // the choice's default
        for (uint32_t m = 0; m < n_modifiers; m++) spa_pod_builder_long(&b, (int64_t)modifiers[m]);
        spa_pod_builder_pop(&b, &f[1]);
        spa_pod_builder_add(&b, SPA_FORMAT_VIDEO_size, SPA_POD_CHOICE_RANGE_Rectangle(&def, &min, &max),
            SPA_FORMAT_VIDEO_framerate, SPA_POD_CHOICE_RANGE_Fraction(&fdef, &fmin, &fmax), 0);
        const struct spa_pod *pod = spa_pod_builder_pop(&b, &f[0]);
        if (!pod) return -1;
        params[n++] = pod;
    }
    if (n >= max_params) return -1;
    struct spa_pod_frame f[2];
    spa_pod_builder_push_object(&b, &f[0], SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat);
    spa_pod_builder_add(&b, SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
        SPA_FORMAT_mediaSubtype, SPA_POD_Id(SPA_MEDIA_SUBTYPE_raw), 0);
    spa_pod_builder_prop(&b, SPA_FORMAT_VIDEO_format, 0);
    spa_pod_builder_push_choice(&b, &f[1], SPA_CHOICE_Enum, 0);
    spa_pod_builder_id(&b, formats[0]);  // the choice's default
    for (uint32_t i = 0; i < n_formats; i++) spa_pod_builder_id(&b, formats[i]);
    spa_pod_builder_pop(&b, &f[1]);
    spa_pod_builder_add(&b, SPA_FORMAT_VIDEO_size, SPA_POD_CHOICE_RANGE_Rectangle(&def, &min, &max),
        SPA_FORMAT_VIDEO_framerate, SPA_POD_CHOICE_RANGE_Fraction(&fdef, &fmin, &fmax), 0);
    const struct spa_pod *pod = spa_pod_builder_pop(&b, &f[0]);
    if (!pod) return -1;
    params[n++] = pod;
    return (int)n;
}

int CSharePipeWire_build_capture_buffers(uint8_t *buffer, uint32_t size, const struct spa_pod **params,
                                         uint32_t max_params, uint32_t data_types,
                                         const struct CSharePipeWire_capture_params *p) {
    if (max_params < 5) return -1;
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, size);
    const uint32_t cursor_max = sizeof(struct spa_meta_cursor) + sizeof(struct spa_meta_bitmap) + p->max_cursor_side * p->max_cursor_side * 4;
    const uint32_t cursor_def = sizeof(struct spa_meta_cursor) + sizeof(struct spa_meta_bitmap) + p->cursor_side * p->cursor_side * 4;
    params[0] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_ParamBuffers, SPA_PARAM_Buffers,
        SPA_PARAM_BUFFERS_buffers, SPA_POD_CHOICE_RANGE_Int((int)p->buffers, (int)p->min_buffers, (int)p->max_buffers),
        SPA_PARAM_BUFFERS_dataType, SPA_POD_CHOICE_FLAGS_Int((int)data_types));
    params[1] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
        SPA_PARAM_META_type, SPA_POD_Id(SPA_META_Header),
        SPA_PARAM_META_size, SPA_POD_Int(sizeof(struct spa_meta_header)));
    params[2] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
        SPA_PARAM_META_type, SPA_POD_Id(SPA_META_VideoCrop),
        SPA_PARAM_META_size, SPA_POD_Int(sizeof(struct spa_meta_region)));
    params[3] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
        SPA_PARAM_META_type, SPA_POD_Id(SPA_META_VideoDamage),
        SPA_PARAM_META_size, SPA_POD_CHOICE_RANGE_Int(sizeof(struct spa_meta_region) * CSHAREPIPEWIRE_MAX_DAMAGE,
            sizeof(struct spa_meta_region) * 1, sizeof(struct spa_meta_region) * CSHAREPIPEWIRE_MAX_DAMAGE));
    params[4] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
        SPA_PARAM_META_type, SPA_POD_Id(SPA_META_Cursor),
        SPA_PARAM_META_size, SPA_POD_CHOICE_RANGE_Int(cursor_def, sizeof(struct spa_meta_cursor), cursor_max));
    for (int i = 0; i < 5; i++) if (!params[i]) return -1;
    return 5;
}

int CSharePipeWire_parse_video_format(const struct spa_pod *param, struct CSharePipeWire_video_format *out) {
    uint32_t media_type, media_subtype;
    struct spa_video_info_raw info;
    memset(out, 0, sizeof(*out));
    memset(&info, 0, sizeof(info));
    if (spa_format_parse(param, &media_type, &media_subtype) < 0) return -1;
    if (media_type != SPA_MEDIA_TYPE_video || media_subtype != SPA_MEDIA_SUBTYPE_raw) return -2;
    if (spa_format_video_raw_parse(param, &info) < 0) return -3;
    out->format = info.format;
    out->width = info.size.width;
    out->height = info.size.height;
    out->fps_num = info.framerate.num;
    out->fps_den = info.framerate.denom;
    out->has_modifier = spa_pod_find_prop(param, NULL, SPA_FORMAT_VIDEO_modifier) != NULL;
    out->modifier = info.modifier;
    return 0;
}

static void copy_rect(struct CSharePipeWire_rect *to, const struct spa_region *from) {
    to->x = from->position.x; to->y = from->position.y;
    to->width = from->size.width; to->height = from->size.height;
}

void CSharePipeWire_read_buffer(struct spa_buffer *buffer, struct CSharePipeWire_buffer_info *out) {
    memset(out, 0, sizeof(*out));
    out->fd = -1;
    if (buffer->n_datas < 1) return;
    struct spa_data *d = &buffer->datas[0];
    out->data = d->data;
    out->data_type = d->type;
    out->fd = d->fd;
    out->maxsize = d->maxsize;
    out->mapoffset = d->mapoffset;
    if (d->chunk) {
        out->offset = d->chunk->offset;
        out->size = d->chunk->size;
        out->stride = d->chunk->stride;
        if (d->chunk->flags & SPA_CHUNK_FLAG_CORRUPTED) out->corrupted = 1;
    }
    struct spa_meta_header *h = spa_buffer_find_meta_data(buffer, SPA_META_Header, sizeof(*h));
    if (h && (h->flags & SPA_META_HEADER_FLAG_CORRUPTED)) out->corrupted = 1;
    struct spa_meta_region *crop = spa_buffer_find_meta_data(buffer, SPA_META_VideoCrop, sizeof(*crop));
    if (crop && spa_meta_region_is_valid(crop)) { out->has_crop = 1; copy_rect(&out->crop, &crop->region); }
    struct spa_meta *damage = spa_buffer_find_meta(buffer, SPA_META_VideoDamage);
    if (damage) {
        struct spa_meta_region *r;
        out->damage_present = 1;
        spa_meta_for_each(r, damage) {
            if (!spa_meta_region_is_valid(r)) break;
            if (out->damage_count < CSHAREPIPEWIRE_MAX_DAMAGE) copy_rect(&out->damage[out->damage_count], &r->region);
            out->damage_count++;
        }
    }
    struct spa_meta_cursor *c = spa_buffer_find_meta_data(buffer, SPA_META_Cursor, sizeof(*c));
    if (c && spa_meta_cursor_is_valid(c)) {
        out->cursor_valid = 1;
        out->cursor_x = c->position.x; out->cursor_y = c->position.y;
        out->hotspot_x = c->hotspot.x; out->hotspot_y = c->hotspot.y;
        if (c->bitmap_offset >= sizeof(*c)) {
            struct spa_meta_bitmap *bm = SPA_PTROFF(c, c->bitmap_offset, struct spa_meta_bitmap);
            if (bm->size.width > 0 && bm->size.height > 0 && bm->offset >= sizeof(*bm) && bm->stride > 0) {
                out->cursor_has_bitmap = 1;
                out->bitmap_format = bm->format;
                out->bitmap_width = bm->size.width;
                out->bitmap_height = bm->size.height;
                out->bitmap_stride = bm->stride;
                out->bitmap = SPA_PTROFF(bm, bm->offset, const uint8_t);
            }
        }
    }
}

int CSharePipeWire_dmabuf_sync(int fd, int start) {
    struct dma_buf_sync sync = { .flags = (start ? DMA_BUF_SYNC_START : DMA_BUF_SYNC_END) | DMA_BUF_SYNC_READ };
    int result;
    do { result = ioctl(fd, DMA_BUF_IOCTL_SYNC, &sync); } while (result < 0 && (errno == EINTR || errno == EAGAIN));
    return result < 0 ? -errno : 0;
}

#include <spa/param/audio/format-utils.h>

const struct spa_pod *CSharePipeWire_build_audio_format(uint8_t *buffer, uint32_t size, uint32_t rate,
                                                        uint32_t channels) {
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, size);
    struct spa_audio_info_raw info = SPA_AUDIO_INFO_RAW_INIT(.format = SPA_AUDIO_FORMAT_S16, .rate = rate,
                                                             .channels = channels);
    if (channels == 1) {
        info.position[0] = SPA_AUDIO_CHANNEL_MONO;
    } else {
        info.position[0] = SPA_AUDIO_CHANNEL_FL;
        info.position[1] = SPA_AUDIO_CHANNEL_FR;
    }
    return spa_format_audio_raw_build(&b, SPA_PARAM_EnumFormat, &info);
}

struct pw_registry *CSharePipeWire_core_get_registry(struct pw_core *core) {
    return pw_core_get_registry(core, PW_VERSION_REGISTRY, 0);
}

int CSharePipeWire_registry_add_listener(struct pw_registry *registry, struct spa_hook *hook,
                                         const struct pw_registry_events *events, void *data) {
    return pw_registry_add_listener(registry, hook, events, data);
}

#include <pipewire/impl-module.h>

struct pw_impl_module *CSharePipeWire_load_module(struct pw_context *context, const char *name, const char *args) {
    return pw_context_load_module(context, name, args, NULL);
}
