// swift-tools-version:6.0
// libFuzzer targets for sharectl's parsers, one folder each under Sources/. Built apart from the
// main package because each target takes libFuzzer's main: `make fuzz` (scripts/fuzz.sh) compiles
// them with `-sanitize=fuzzer,address -parse-as-library` and links each into its own binary.
//
// The plain-Swift modules (ShareCore, RTPWire, SDPWire, RoomProtocol) are imported as products.
// Code of modules that link C libraries is compiled here from its own files (symlinks into
// ../Sources), never copied: a fuzz target holds the call-stack files it drives,
// and `VideoSend` below is the plain-Swift part of the real VideoSend module (no encoder, so no
// x264, libvpx or libav). SwiftPM refuses a second target named VideoSend in the graph, so the
// module is PureVideoSend and the fuzz targets read `import VideoSend` as it (-module-alias).
import Foundation
import PackageDescription

let sourcesURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Sources")
let fuzzTargets = ((try? FileManager.default.contentsOfDirectory(atPath: sourcesURL.path)) ?? [])
    .filter { $0.hasPrefix("Fuzz") }
    .sorted()

let package = Package(
    name: "sharectl-fuzz",
    dependencies: [.package(name: "sharectl", path: "..")],
    targets: [
        .target(
            name: "PureVideoSend",
            dependencies: ["ShareCore", "RTPWire"].map { .product(name: $0, package: "sharectl") },
            swiftSettings: [.swiftLanguageMode(.v6)]),
        // Reads a fuzzer's input as a script of steps (see ScriptInput.swift).
        .target(name: "ScriptInput", swiftSettings: [.swiftLanguageMode(.v6)])
    ]
        + fuzzTargets.map { name in
            .target(
                name: name,
                dependencies: ["ShareCore", "RTPWire", "SDPWire", "RoomProtocol"].map {
                    .product(name: $0, package: "sharectl")
                }
                    + [.target(name: "PureVideoSend"), .target(name: "ScriptInput")],
                swiftSettings: [.swiftLanguageMode(.v6), .unsafeFlags(["-module-alias", "VideoSend=PureVideoSend"])])
        }
)
