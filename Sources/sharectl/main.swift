import CallsClient
import CallsServer
import ScreenCapture
import VideoSend

print("sharectl: libraries: x264 build \(CodecLibraries.x264Build), \(CodecLibraries.vpxVersion), avcodec \(CodecLibraries.avcodecVersion), PipeWire \(CaptureLibraries.pipewireLibraryVersion), libyuv \(CaptureLibraries.libyuvVersion), \(TransportLibraries.openSSLVersion), \(TransportLibraries.srtpVersion), \(TransportLibraries.opusVersion), libsoup \(TransportLibraries.soupVersion), DRM modifier 0 = \(CaptureLibraries.drmModifierName(0) ?? "?")")
