// Thin shims over libopus: opus_encoder_ctl and opus_decoder_ctl are variadic, and their request
// codes are macros.
#pragma once
#include <opus.h>

int CShareOpus_set_bitrate(OpusEncoder *encoder, opus_int32 bitsPerSecond);
int CShareOpus_set_vbr(OpusEncoder *encoder, int vbr, int constrained);
int CShareOpus_set_dtx(OpusEncoder *encoder, int enabled);
int CShareOpus_set_inband_fec(OpusEncoder *encoder, int enabled, int expectedLossPercent);
int CShareOpus_get_lookahead(OpusEncoder *encoder, opus_int32 *samples);
int CShareOpus_reset_encoder(OpusEncoder *encoder);
