internal import COpus

/// The media libraries this build links, as they report themselves.
public enum MediaLibraries {
    public static var opusVersion: String { String(cString: opus_get_version_string()) }
}
