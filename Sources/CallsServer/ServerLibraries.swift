internal import CSoup

/// The HTTP and WebSocket library the room server is built on.
public enum ServerLibraries {
    public static var soupVersion: String {
        "\(soup_get_major_version()).\(soup_get_minor_version()).\(soup_get_micro_version())"
    }
}
