internal import CSoup

/// The HTTP and WebSocket library this build links, as it reports itself.
public enum SignallingLibraries {
    public static var soupVersion: String {
        "\(soup_get_major_version()).\(soup_get_minor_version()).\(soup_get_micro_version())"
    }
}
