// swift-tools-version:6.0
// libFuzzer targets for sharectl's parsers, one folder each under Sources/. Built apart from the
// main package because each target takes libFuzzer's main: `make fuzz` (scripts/fuzz.sh) compiles
// them with `-sanitize=fuzzer,address -parse-as-library` and links each into its own binary.
import Foundation
import PackageDescription

let sourcesURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Sources")
let fuzzTargets = ((try? FileManager.default.contentsOfDirectory(atPath: sourcesURL.path)) ?? [])
    .filter { $0.hasPrefix("Fuzz") }
    .sorted()

let package = Package(
    name: "sharectl-fuzz",
    dependencies: [.package(name: "sharectl", path: "..")],
    targets: fuzzTargets.map { name in
        .target(
            name: name,
            dependencies: ["ShareCore", "RTPWire", "SDPWire"].map { .product(name: $0, package: "sharectl") },
            swiftSettings: [.swiftLanguageMode(.v6)])
    }
)
