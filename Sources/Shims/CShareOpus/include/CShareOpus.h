// Thin shims over libopus: opus_encoder_ctl and opus_decoder_ctl are variadic, and its request codes are macros.
#pragma once
#include <opus.h>

int CShareOpus_set_bitrate(OpusEncoder *encoder, opus_int32 bitsPerSecond);
int CShareOpus_set_vbr(OpusEncoder *encoder, int vbr, int constrained);
int CShareOpus_reset_encoder(OpusEncoder *encoder);
int CShareOpus_reset_decoder(OpusDecoder *decoder);
