#include "CShareOpus.h"

int CShareOpus_set_bitrate(OpusEncoder *encoder, opus_int32 bitsPerSecond) { return opus_encoder_ctl(encoder, OPUS_SET_BITRATE(bitsPerSecond)); }
int CShareOpus_set_vbr(OpusEncoder *encoder, int vbr, int constrained) {
    int result = opus_encoder_ctl(encoder, OPUS_SET_VBR(vbr));
    return result != OPUS_OK ? result : opus_encoder_ctl(encoder, OPUS_SET_VBR_CONSTRAINT(constrained));
}
int CShareOpus_set_dtx(OpusEncoder *encoder, int enabled) { return opus_encoder_ctl(encoder, OPUS_SET_DTX(enabled)); }
int CShareOpus_set_inband_fec(OpusEncoder *encoder, int enabled, int expectedLossPercent) {
    int result = opus_encoder_ctl(encoder, OPUS_SET_INBAND_FEC(enabled));
    return result != OPUS_OK ? result : opus_encoder_ctl(encoder, OPUS_SET_PACKET_LOSS_PERC(expectedLossPercent));
}
int CShareOpus_get_lookahead(OpusEncoder *encoder, opus_int32 *samples) { return opus_encoder_ctl(encoder, OPUS_GET_LOOKAHEAD(samples)); }
int CShareOpus_reset_encoder(OpusEncoder *encoder) { return opus_encoder_ctl(encoder, OPUS_RESET_STATE); }
