internal import CNice
internal import COpenSSL
internal import COpus
internal import CSRTP
internal import CSoup

/// The transport and audio libraries this build links, as they report themselves.
public enum TransportLibraries {
    public static var openSSLVersion: String { String(cString: OpenSSL_version(OPENSSL_VERSION)) }
    public static var srtpVersion: String { String(cString: srtp_get_version_string()) }
    public static var opusVersion: String { String(cString: opus_get_version_string()) }
    public static var soupVersion: String {
        "\(soup_get_major_version()).\(soup_get_minor_version()).\(soup_get_micro_version())"
    }
    /// libnice has no version call; naming a component state proves the library is linked.
    public static var niceReadyStateName: String {
        String(cString: nice_component_state_to_string(NICE_COMPONENT_STATE_READY))
    }
}
