// swift-tools-version:6.0
// sharectl — a Linux screen-share and video pipeline client.
// Layout and rules: README.md ("Layout"). No outside Swift packages: the toolchain, Foundation,
// Dispatch, Synchronization and Debian's C libraries are the whole toolbox.
import PackageDescription

/// One system-library target per C library, found through pkg-config, installed with apt.
func system(_ name: String, pkgConfig: String?, apt: [String]) -> Target {
    .systemLibrary(name: name, path: "Sources/System/\(name)", pkgConfig: pkgConfig, providers: [.apt(apt)])
}

/// Thin C shims for what Swift cannot import (macros, variadic and inline functions).
func shim(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
    .target(name: name, dependencies: dependencies, path: "Sources/Shims/\(name)")
}

let swift6: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "sharectl",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "sharectl", targets: ["sharectl"]),
        .library(name: "ShareCore", targets: ["ShareCore"]),
        .library(name: "RTPWire", targets: ["RTPWire"]),
        .library(name: "SDPWire", targets: ["SDPWire"]),
        .library(name: "RoomProtocol", targets: ["RoomProtocol"])
    ],
    targets: [
        // MARK: C libraries
        system("CX264", pkgConfig: "x264", apt: ["libx264-dev"]),
        system("CVPX", pkgConfig: "vpx", apt: ["libvpx-dev"]),
        system("CAVCodec", pkgConfig: "libavcodec", apt: ["libavcodec-dev", "libavutil-dev"]),
        system("CPipeWire", pkgConfig: "libpipewire-0.3", apt: ["libpipewire-0.3-dev", "libspa-0.2-dev"]),
        system("CDRM", pkgConfig: "libdrm", apt: ["libdrm-dev"]),
        system("CNice", pkgConfig: "nice", apt: ["libnice-dev"]),
        system("CGIO", pkgConfig: "gio-2.0", apt: ["libglib2.0-dev"]),
        system("CSRTP", pkgConfig: "libsrtp2", apt: ["libsrtp2-dev"]),
        system("COpus", pkgConfig: "opus", apt: ["libopus-dev"]),
        system("COpenSSL", pkgConfig: "openssl", apt: ["libssl-dev"]),
        system("CSoup", pkgConfig: "libsoup-3.0", apt: ["libsoup-3.0-dev"]),
        // sd_notify: READY, STATUS and the watchdog for a kiosk's service unit.
        system("CSystemd", pkgConfig: "libsystemd", apt: ["libsystemd-dev"]),
        // libyuv-dev ships no pkg-config file: headers are in /usr/include, the module map links "yuv".
        system("CYUV", pkgConfig: nil, apt: ["libyuv-dev"]),

        // MARK: C shims
        shim("CShareCodecs", ["CX264", "CVPX"]),
        shim("CShareGLib", ["CNice", "CGIO"]),
        shim("CSharePipeWire", ["CPipeWire"]),
        shim("CShareV4L2", []),
        shim("CShareSSL", ["COpenSSL", "CSRTP"]),
        shim("CShareSoup", ["CSoup"]),
        shim("CShareOpus", ["COpus"]),
        shim("CShareSanitizer", []),

        // MARK: Support modules
        .target(name: "ShareCore", swiftSettings: swift6),
        // The `--stats-json` lines, one Codable type per command (docs/stats.schema.json in Swift):
        // written by CallsClient, read by ShareTooling; pure Swift, so both and their tests import it cheaply.
        .target(name: "StatsLine", swiftSettings: swift6),
        .target(name: "RTPWire", dependencies: ["ShareCore"], swiftSettings: swift6),
        .target(name: "SDPWire", dependencies: ["ShareCore", "RTPWire"], swiftSettings: swift6),
        // The one GLib main-loop thread of a process (libnice, libsoup, GDBus run on it).
        .target(name: "GLibLoop", dependencies: ["ShareCore", "CGIO", "CShareSanitizer"], swiftSettings: swift6),
        // Option tables: parsing, help, config-file keys, shell completions (no I/O).
        .target(name: "CommandLineOptions", swiftSettings: swift6),
        // The commit a build comes from, for `sharectl version` (runs git before each build).
        .plugin(name: "GitCommit", capability: .buildTool()),

        // MARK: The user's modules
        .target(
            name: "ScreenCapture",
            dependencies: [
                "ShareCore", "GLibLoop", "CPipeWire", "CSharePipeWire", "CDRM", "CYUV", "CShareV4L2", "CGIO",
                "CAVCodec"
            ],
            swiftSettings: swift6),
        .target(
            name: "VideoSend",
            dependencies: ["ShareCore", "RTPWire", "ScreenCapture", "CX264", "CVPX", "CShareCodecs", "CAVCodec"],
            swiftSettings: swift6),
        .target(
            name: "ScreenWatchdog", dependencies: ["ShareCore", "StatsLine", "ScreenCapture"], swiftSettings: swift6),
        // MARK: The call stack, one layer a target; each imports only the layers below it.
        // The room protocol: messages and the room's rules, shared by server, client and fuzzers.
        .target(name: "RoomProtocol", dependencies: ["ShareCore"], swiftSettings: swift6),
        // WebRTC transport: ICE (libnice), DTLS (OpenSSL), SRTP (libsrtp2), demux and consent.
        .target(
            name: "WebRTCTransport",
            dependencies: ["ShareCore", "GLibLoop", "CNice", "CGIO", "CShareGLib", "CSRTP", "COpenSSL", "CShareSSL"],
            swiftSettings: swift6),
        // Signalling: HTTP, WHIP, trickle ICE and the room socket (libsoup).
        .target(
            name: "Signalling",
            dependencies: ["ShareCore", "GLibLoop", "RoomProtocol", "CSoup", "CShareSoup", "CGIO"],
            swiftSettings: swift6),
        // The peer connection: transceivers, JSEP, RTP send and receive, audio, decoding.
        .target(
            name: "CallMedia",
            dependencies: [
                "ShareCore", "RTPWire", "SDPWire", "GLibLoop", "VideoSend", "ScreenCapture",
                "WebRTCTransport", "COpus", "CShareOpus", "CPipeWire", "CSharePipeWire"
            ],
            swiftSettings: swift6),
        // Calls and shares: the call session and the WHIP share. Imports no C module.
        .target(
            name: "CallsClient",
            dependencies: [
                "ShareCore", "RTPWire", "SDPWire", "GLibLoop", "VideoSend", "ScreenCapture",
                "ScreenWatchdog", "StatsLine", "RoomProtocol", "WebRTCTransport", "Signalling", "CallMedia"
            ],
            swiftSettings: swift6),
        .target(
            name: "CallsServer",
            dependencies: ["ShareCore", "RoomProtocol", "GLibLoop", "Signalling", "CSoup", "CShareSoup", "CGIO"],
            resources: [.copy("Client")], swiftSettings: swift6),
        // Tooling around shares: diagnose (stats timelines and plots), scenario files, their runner
        // and judge.
        .target(
            name: "ShareTooling", dependencies: ["ShareCore", "StatsLine", "ScreenWatchdog"], swiftSettings: swift6),
        .executableTarget(
            name: "sharectl",
            dependencies: [
                "ShareCore", "RTPWire", "SDPWire", "ScreenCapture", "VideoSend", "ScreenWatchdog",
                "CallsClient", "CallsServer", "WebRTCTransport", "Signalling", "CallMedia", "RoomProtocol",
                "ShareTooling", "StatsLine", "CommandLineOptions", "CSystemd"
            ],
            swiftSettings: swift6, plugins: ["GitCommit"]),

        // MARK: Tests — one target per module, and what they share (waits, clocks, a room server)
        .target(
            name: "TestSupport", dependencies: ["CallsServer", "RoomProtocol", "GLibLoop", "ShareCore"],
            path: "Tests/TestSupport",
            swiftSettings: swift6),
        .testTarget(name: "ShareCoreTests", dependencies: ["ShareCore"], swiftSettings: swift6),
        .testTarget(name: "StatsLineTests", dependencies: ["StatsLine", "TestSupport"], swiftSettings: swift6),
        .testTarget(
            name: "GLibLoopTests", dependencies: ["GLibLoop", "ShareCore", "TestSupport"], swiftSettings: swift6),
        .testTarget(
            name: "RTPWireTests", dependencies: ["RTPWire"], resources: [.copy("Fixtures")],
            swiftSettings: swift6),
        .testTarget(
            name: "SDPWireTests", dependencies: ["SDPWire", "RTPWire"], resources: [.copy("Fixtures")],
            swiftSettings: swift6),
        .testTarget(
            name: "ScreenCaptureTests", dependencies: ["ScreenCapture", "CAVCodec", "TestSupport"],
            swiftSettings: swift6),
        .testTarget(
            name: "VideoSendTests", dependencies: ["VideoSend", "RTPWire", "CAVCodec", "ShareCore", "TestSupport"],
            swiftSettings: swift6),
        .testTarget(
            name: "ScreenWatchdogTests",
            dependencies: ["ScreenWatchdog", "StatsLine", "ScreenCapture", "ShareCore", "TestSupport"],
            swiftSettings: swift6),
        .testTarget(
            name: "ShareToolingTests", dependencies: ["ShareTooling", "StatsLine", "ScreenWatchdog", "ShareCore"],
            resources: [.copy("Fixtures")], swiftSettings: swift6),
        .testTarget(
            name: "CallsClientTests",
            dependencies: [
                "CallsClient", "CallsServer", "WebRTCTransport", "Signalling", "CallMedia", "RoomProtocol",
                "ShareTooling", "StatsLine", "GLibLoop", "VideoSend", "RTPWire", "SDPWire", "ScreenCapture",
                "ScreenWatchdog",
                "ShareCore", "TestSupport"
            ],
            swiftSettings: swift6),
        .testTarget(
            name: "CallsServerTests",
            dependencies: ["CallsServer", "RoomProtocol", "GLibLoop", "Signalling", "TestSupport"],
            swiftSettings: swift6),
        .testTarget(name: "CommandLineOptionsTests", dependencies: ["CommandLineOptions"], swiftSettings: swift6),
        .testTarget(
            name: "sharectlTests", dependencies: ["sharectl", "CommandLineOptions", "ShareCore", "TestSupport"],
            swiftSettings: swift6)
    ]
)
