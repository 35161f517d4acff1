import Foundation
import ScreenWatchdog
import ShareTooling

/// `sharectl diagnose STATS.jsonl [--out DIR]`: a plain-text report and a plot of a share's life
/// from its `--stats-json` file.
enum DiagnoseCommand {
    static func run(_ arguments: Arguments) throws {
        guard arguments.positional.count == 1, let path = arguments.positional.first else {
            throw Arguments.UsageError(
                description: "diagnose needs one stats file, e.g. sharectl diagnose share.jsonl [--out DIR]")
        }
        let contents = try StatsFile.read(path: path)
        let diagnosis = ShareDiagnosis(source: path, contents: contents)
        let directory = arguments.value("out") ?? defaultDirectory(for: path)
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let report = URL(fileURLWithPath: directory).appendingPathComponent("report.txt")
            let plot = URL(fileURLWithPath: directory).appendingPathComponent("plot.svg")
            try Data(diagnosis.report.utf8).write(to: report)
            try Data(ShareTimelinePlot(diagnosis).svg.utf8).write(to: plot)
            say(diagnosis.report)
            say("diagnose: wrote \(report.path) and \(plot.path)")
        } catch let error as CocoaError {
            throw DiagnoseError(
                reason: "could not write to \(directory): \(error.localizedDescription) (choose another with --out DIR)"
            )
        }
    }

    /// `share.jsonl` → `share.diagnose` beside it.
    static func defaultDirectory(for path: String) -> String {
        let url = URL(fileURLWithPath: path)
        return url.deletingPathExtension().path + ".diagnose"
    }

    struct DiagnoseError: Error, CustomStringConvertible {
        var reason: String
        var description: String { "diagnose: \(reason)" }
    }
}
