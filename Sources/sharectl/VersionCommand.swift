import CallsClient
import ScreenCapture
import VideoSend
import CallMedia
import Signalling
import WebRTCTransport

/// `sharectl version` (or `sharectl --version`): sharectl's own version and the commit it was built
/// from (`GitCommit`, written before each build by the GitCommit plugin), then the C libraries.
enum VersionCommand {
    /// sharectl's version; the commit says exactly which source a binary came from.
    static let number = "0.1.0"

    static func run(_ arguments: Arguments) throws {
        say(
            """
            \(headline(commit: GitCommit.hash, modified: GitCommit.modified))
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

    /// "sharectl 0.1.0, commit 0123…cdef (Swift 6.3)", "… with local changes", or "commit unknown"
    /// for a build from a tree that was not a git checkout.
    static func headline(commit: String?, modified: Bool) -> String {
        let source = commit.map { "commit \($0)\(modified ? " with local changes" : "")" } ?? "commit unknown"
        return "sharectl \(number), \(source) (Swift \(swiftVersion))"
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
