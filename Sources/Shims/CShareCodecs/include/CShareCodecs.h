// Thin shims over codec entry points that Swift cannot import directly.
#pragma once
#include <stdint.h>
#include <x264.h>
#include <vpx/vpx_encoder.h>
#include <vpx/vpx_decoder.h>
#include <vpx/vp8cx.h>
#include <vpx/vp8dx.h>

// x264_encoder_open is a macro that appends the build number.
x264_t *CShareX264_encoder_open(x264_param_t *param);

// vpx_codec_enc_init is a macro that passes the ABI version.
vpx_codec_err_t CShareVPX_enc_init_vp8(vpx_codec_ctx_t *ctx, const vpx_codec_enc_cfg_t *cfg, vpx_codec_flags_t flags);
// vpx_codec_control is a macro over a variadic function.
vpx_codec_err_t CShareVPX_control_int(vpx_codec_ctx_t *ctx, int id, int value);
// The same for a control that writes an int back (VP8E_GET_LAST_QUANTIZER).
vpx_codec_err_t CShareVPX_control_int_out(vpx_codec_ctx_t *ctx, int id, int *value);
const vpx_codec_iface_t *CShareVPX_vp8_cx(void);
