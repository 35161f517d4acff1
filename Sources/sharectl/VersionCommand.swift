import CallsClient
import ScreenCapture
import VideoSend
import CallMedia
import Signalling
import WebRTCTransport

enum VersionCommand {
    static func run(_ arguments: Arguments) throws {
        say("""
            sharectl (Swift \(swiftVersion))
              x264        build \(CodecLibraries.x264Build)
              libvpx      \(CodecLibraries.vpxVersion)
              libavcodec  \(CodecLibraries.avcodecVersion)
              PipeWire    \(CaptureLibraries.pipewireLibraryVersion) (headers \(CaptureLibraries.pipewireHeadersVersion))
              libyuv      \(CaptureLibraries.libyuvVersion)
              libdrm      modifier 0 is \(CaptureLibraries.drmModifierName(0) ?? "unknown")
              libnice     linked (a ready component reads "\(TransportLibraries.niceReadyStateName)")
              OpenSSL     \(TransportLibraries.openSSLVersion)
              libsrtp2    \(TransportLibraries.srtpVersion)
              libopus     \(MediaLibraries.opusVersion)
              libsoup     \(SignallingLibraries.soupVersion)
            """)
    }

    private static var swiftVersion: String {
        #if compiler(>=6.3)
        "6.3"
        #elseif compiler(>=6.2)
        "6.2"
        #else
        "6"
        #endif
    }
}
