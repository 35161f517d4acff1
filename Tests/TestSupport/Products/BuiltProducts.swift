import Foundation

/// The executables this build made, for tests that run them as a user would.
public enum BuiltProducts {
    /// The package's root (two folders above Tests/TestSupport/Products).
    public static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `sharectl` beside the test bundle (whatever the build folder: `--scratch-path`, a sanitizer
    /// build), else `.build/debug/sharectl`.
    public static let sharectl: String = {
        let beside = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")).map {
            URL(fileURLWithPath: $0).deletingLastPathComponent().appendingPathComponent("sharectl").path
        }
        if let beside, FileManager.default.isExecutableFile(atPath: beside) { return beside }
        return packageRoot.appendingPathComponent(".build/debug/sharectl").path
    }()
}
