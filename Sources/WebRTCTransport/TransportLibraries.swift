internal import CNice
internal import COpenSSL
internal import CSRTP

/// The transport libraries this build links, as they report themselves.
public enum TransportLibraries {
    public static var openSSLVersion: String { String(cString: OpenSSL_version(OPENSSL_VERSION)) }
    public static var srtpVersion: String { String(cString: srtp_get_version_string()) }
    /// libnice has no version call; naming a component state proves the library is linked.
    public static var niceReadyStateName: String {
        String(cString: nice_component_state_to_string(NICE_COMPONENT_STATE_READY))
    }
}
