#include "CShareOpus.h"

int CShareOpus_set_bitrate(OpusEncoder *encoder, opus_int32 bitsPerSecond) { return opus_encoder_ctl(encoder, OPUS_SET_BITRATE(bitsPerSecond)); }
int CShareOpus_set_vbr(OpusEncoder *encoder, int vbr, int constrained) {
    int result = opus_encoder_ctl(encoder, OPUS_SET_VBR(vbr));
    return result != OPUS_OK ? result : opus_encoder_ctl(encoder, OPUS_SET_VBR_CONSTRAINT(constrained));
}
int CShareOpus_reset_encoder(OpusEncoder *encoder) { return opus_encoder_ctl(encoder, OPUS_RESET_STATE); }
int CShareOpus_reset_decoder(OpusDecoder *decoder) { return opus_decoder_ctl(decoder, OPUS_RESET_STATE); }
