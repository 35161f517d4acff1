#include "CShareCodecs.h"

x264_t *CShareX264_encoder_open(x264_param_t *param) { return x264_encoder_open(param); }

vpx_codec_err_t CShareVPX_enc_init_vp8(vpx_codec_ctx_t *ctx, const vpx_codec_enc_cfg_t *cfg, vpx_codec_flags_t flags) {
    return vpx_codec_enc_init(ctx, vpx_codec_vp8_cx(), cfg, flags);
}

vpx_codec_err_t CShareVPX_control_int(vpx_codec_ctx_t *ctx, int id, int value) {
    return vpx_codec_control_(ctx, id, value);
}

vpx_codec_err_t CShareVPX_control_int_out(vpx_codec_ctx_t *ctx, int id, int *value) {
    return vpx_codec_control_(ctx, id, value);
}

const vpx_codec_iface_t *CShareVPX_vp8_cx(void) { return vpx_codec_vp8_cx(); }
