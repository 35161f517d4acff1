internal import CDRM
internal import CPipeWire
internal import CSharePipeWire
internal import CYUV

/// The capture libraries this build links, as they report themselves.
public enum CaptureLibraries {
    public static var pipewireLibraryVersion: String { String(cString: pw_get_library_version()) }
    public static var pipewireHeadersVersion: String { String(cString: CSharePipeWire_headers_version()) }
    public static var libyuvVersion: Int { Int(LIBYUV_VERSION) }

    /// libdrm's name for a DMA-BUF format modifier, e.g. "LINEAR" for 0.
    public static func drmModifierName(_ modifier: UInt64) -> String? {
        guard let name = drmGetFormatModifierName(modifier) else { return nil }
        defer { free(name) }
        return String(cString: name)
    }
}
