/* pw_test_screen — a PipeWire Video/Source node for the `--source pipewire:NODE` gate: a moving bar
 * on a W×H BGRx picture at FPS, in memfd buffers, with header, damage and crop metadata. With a
 * crop (CW×CH at CX,CY) every buffer says only that part is the picture, so a consumer that honours
 * crop sends CW×CH. A stand-in for "any PipeWire video node" (screens come through the portal).
 * With CORRUPT=N every Nth buffer has the header's corrupted flag (a consumer must skip it).
 * Prints NODE_ID=<id> once the node exists. Built by the gate with the system C compiler.
 *   usage: pw_test_screen W H FPS [CX CY CW CH [CORRUPT]] */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <pipewire/pipewire.h>
#include <spa/param/video/format-utils.h>
#include <spa/buffer/meta.h>

struct screen {
    struct pw_main_loop *loop;
    struct pw_stream *stream;
    struct spa_source *timer;
    int w, h, fps, stride, printed;
    int cx, cy, cw, ch, corrupt_every;
    uint64_t seq;
};

static void on_process(void *data) {
    struct screen *s = data;
    struct pw_buffer *b = pw_stream_dequeue_buffer(s->stream);
    if (!b) return;
    struct spa_buffer *buf = b->buffer;
    uint8_t *p = buf->datas[0].data;
    if (!p) { pw_stream_queue_buffer(s->stream, b); return; }
    int x0 = (int)((s->seq * 8) % (uint64_t)s->w);
    for (int y = 0; y < s->h; y++) {
        uint32_t *row = (uint32_t *)(p + (size_t)y * s->stride);
        for (int x = 0; x < s->w; x++)
            row[x] = (x >= x0 && x < x0 + 64) ? 0x00ffffffu : (uint32_t)((y * 255) / s->h) << 8;
    }
    struct spa_meta_header *h = spa_buffer_find_meta_data(buf, SPA_META_Header, sizeof(*h));
    if (h) {
        h->pts = -1; h->seq = s->seq; h->dts_offset = 0;
        h->flags = s->corrupt_every > 0 && s->seq % (uint64_t)s->corrupt_every == 0 ? SPA_META_HEADER_FLAG_CORRUPTED : 0;
    }
    struct spa_meta_region *damage = spa_buffer_find_meta_data(buf, SPA_META_VideoDamage, sizeof(*damage));
    if (damage) damage->region = SPA_REGION(0, 0, s->w, s->h);
    struct spa_meta_region *crop = spa_buffer_find_meta_data(buf, SPA_META_VideoCrop, sizeof(*crop));
    if (crop) crop->region = s->cw > 0 ? SPA_REGION(s->cx, s->cy, s->cw, s->ch) : SPA_REGION(0, 0, s->w, s->h);
    buf->datas[0].chunk->offset = 0;
    buf->datas[0].chunk->size = s->stride * s->h;
    buf->datas[0].chunk->stride = s->stride;
    s->seq++;
    pw_stream_queue_buffer(s->stream, b);
}

static void on_timeout(void *data, uint64_t expirations) { pw_stream_trigger_process(((struct screen *)data)->stream); }

static void on_state_changed(void *data, enum pw_stream_state old, enum pw_stream_state state, const char *error) {
    struct screen *s = data;
    if (!s->printed && state >= PW_STREAM_STATE_PAUSED) {
        printf("NODE_ID=%u\n", pw_stream_get_node_id(s->stream));
        fflush(stdout);
        s->printed = 1;
    }
    struct timespec interval = { 0, 1000000000L / s->fps }, soon = { 0, 1 };
    if (state == PW_STREAM_STATE_STREAMING)
        pw_loop_update_timer(pw_main_loop_get_loop(s->loop), s->timer, &soon, &interval, false);
    else
        pw_loop_update_timer(pw_main_loop_get_loop(s->loop), s->timer, NULL, NULL, false);
    if (state == PW_STREAM_STATE_ERROR) fprintf(stderr, "stream error: %s\n", error);
}

static void on_param_changed(void *data, uint32_t id, const struct spa_pod *param) {
    struct screen *s = data;
    if (!param || id != SPA_PARAM_Format) return;
    uint8_t buffer[1024];
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, sizeof(buffer));
    const struct spa_pod *params[4];
    params[0] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_ParamBuffers, SPA_PARAM_Buffers,
        SPA_PARAM_BUFFERS_buffers, SPA_POD_CHOICE_RANGE_Int(4, 2, 16),
        SPA_PARAM_BUFFERS_blocks, SPA_POD_Int(1),
        SPA_PARAM_BUFFERS_size, SPA_POD_Int(s->stride * s->h),
        SPA_PARAM_BUFFERS_stride, SPA_POD_Int(s->stride),
        SPA_PARAM_BUFFERS_dataType, SPA_POD_CHOICE_FLAGS_Int((1 << SPA_DATA_MemFd) | (1 << SPA_DATA_MemPtr)));
    params[1] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
        SPA_PARAM_META_type, SPA_POD_Id(SPA_META_Header),
        SPA_PARAM_META_size, SPA_POD_Int(sizeof(struct spa_meta_header)));
    params[2] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
        SPA_PARAM_META_type, SPA_POD_Id(SPA_META_VideoDamage),
        SPA_PARAM_META_size, SPA_POD_CHOICE_RANGE_Int(sizeof(struct spa_meta_region) * 16,
            sizeof(struct spa_meta_region), sizeof(struct spa_meta_region) * 16));
    params[3] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
        SPA_PARAM_META_type, SPA_POD_Id(SPA_META_VideoCrop),
        SPA_PARAM_META_size, SPA_POD_Int(sizeof(struct spa_meta_region)));
    pw_stream_update_params(s->stream, params, 4);
}

static const struct pw_stream_events events = {
    PW_VERSION_STREAM_EVENTS,
    .process = on_process,
    .state_changed = on_state_changed,
    .param_changed = on_param_changed,
};

static void on_signal(void *data, int number) { pw_main_loop_quit(((struct screen *)data)->loop); }

int main(int argc, char *argv[]) {
    struct screen s = { .w = 1280, .h = 720, .fps = 30 };
    if (argc > 3) { s.w = atoi(argv[1]); s.h = atoi(argv[2]); s.fps = atoi(argv[3]); }
    if (argc > 7) { s.cx = atoi(argv[4]); s.cy = atoi(argv[5]); s.cw = atoi(argv[6]); s.ch = atoi(argv[7]); }
    if (argc > 8) s.corrupt_every = atoi(argv[8]);
    if (s.w <= 0 || s.h <= 0 || s.fps <= 0) { fprintf(stderr, "usage: %s W H FPS [CX CY CW CH [CORRUPT]]\n", argv[0]); return 2; }
    s.stride = s.w * 4;
    pw_init(&argc, &argv);
    s.loop = pw_main_loop_new(NULL);
    struct pw_loop *loop = pw_main_loop_get_loop(s.loop);
    pw_loop_add_signal(loop, SIGINT, on_signal, &s);
    pw_loop_add_signal(loop, SIGTERM, on_signal, &s);
    s.timer = pw_loop_add_timer(loop, on_timeout, &s);
    s.stream = pw_stream_new_simple(loop, "sharectl-test-screen",
        pw_properties_new(PW_KEY_MEDIA_CLASS, "Video/Source", PW_KEY_MEDIA_TYPE, "Video",
            PW_KEY_MEDIA_CATEGORY, "Capture", PW_KEY_MEDIA_ROLE, "Screen",
            PW_KEY_NODE_NAME, "sharectl-test-screen", PW_KEY_NODE_DESCRIPTION, "Test screen", NULL),
        &events, &s);
    uint8_t buffer[1024];
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, sizeof(buffer));
    const struct spa_pod *params[1];
    params[0] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat,
        SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
        SPA_FORMAT_mediaSubtype, SPA_POD_Id(SPA_MEDIA_SUBTYPE_raw),
        SPA_FORMAT_VIDEO_format, SPA_POD_Id(SPA_VIDEO_FORMAT_BGRx),
        SPA_FORMAT_VIDEO_size, SPA_POD_Rectangle(&SPA_RECTANGLE(s.w, s.h)),
        SPA_FORMAT_VIDEO_framerate, SPA_POD_Fraction(&SPA_FRACTION(0, 1)),
        SPA_FORMAT_VIDEO_maxFramerate, SPA_POD_Fraction(&SPA_FRACTION(s.fps, 1)));
    pw_stream_connect(s.stream, PW_DIRECTION_OUTPUT, PW_ID_ANY,
        PW_STREAM_FLAG_DRIVER | PW_STREAM_FLAG_MAP_BUFFERS, params, 1);
    pw_main_loop_run(s.loop);
    pw_stream_destroy(s.stream);
    pw_main_loop_destroy(s.loop);
    pw_deinit();
    return 0;
}
