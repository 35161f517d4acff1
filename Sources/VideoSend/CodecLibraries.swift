internal import CAVCodec
internal import CVPX
internal import CX264

/// The codec libraries this build links, as their own version functions report them.
public enum CodecLibraries {
    /// x264's build number (the ABI that `x264_encoder_open` carries).
    public static var x264Build: Int { Int(X264_BUILD) }
    public static var vpxVersion: String { String(cString: vpx_codec_version_str()) }
    public static var avcodecVersion: String {
        let v = avcodec_version()
        return "\(v >> 16).\((v >> 8) & 0xFF).\(v & 0xFF)"
    }
}
