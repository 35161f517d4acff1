import Foundation

/// What the microphone passes through on its way into a call: PipeWire's own echo canceller
/// (`libpipewire-module-echo-cancel` with the WebRTC audio processing engine), loaded into
/// sharectl's PipeWire context. No audio DSP is written here; this value only decides what the
/// module is asked for and what the status line says about it.
///
/// The module makes four nodes: a capture stream (from the microphone), a source (the cleaned
/// microphone, what the call captures), a sink (the echo reference: the call's playout goes into
/// it) and a playback stream (the sink's audio on to the real output). Echo cancellation is the
/// reference: with `--no-echo-cancel` the module still runs for noise suppression and gain control
/// (PipeWire 0.3.65's WebRTC engine cannot turn its canceller off), but the call's playout goes
/// straight to the output, so there is nothing to cancel. With both turned off the module is not
/// loaded at all.
public struct EchoCancelSettings: Sendable, Equatable {
    /// The call's playout is the module's echo reference (`--no-echo-cancel` turns it off).
    public var echoCancellation = true
    /// The WebRTC engine's noise suppression (`--no-noise-suppression` turns it off).
    public var noiseSuppression = true

    /// The Debian package that carries the module's WebRTC engine (`libspa-aec-webrtc.so`).
    public static let package = "libspa-0.2-modules"
    public static let moduleName = "libpipewire-module-echo-cancel"

    public init(echoCancellation: Bool = true, noiseSuppression: Bool = true) {
        self.echoCancellation = echoCancellation
        self.noiseSuppression = noiseSuppression
    }

    /// The module is loaded when either part runs.
    public var loadsModule: Bool { echoCancellation || noiseSuppression }

    /// The names of the module's four nodes, one set per process so that two sharectl processes on
    /// one PipeWire do not meet.
    public struct Nodes: Sendable, Equatable {
        public var capture, source, sink, playback: String

        public init(processID: Int32) {
            capture = "sharectl-echo-cancel-capture.\(processID)"
            source = "sharectl-echo-cancel-source.\(processID)"
            sink = "sharectl-echo-cancel-sink.\(processID)"
            playback = "sharectl-echo-cancel-playback.\(processID)"
        }
    }

    /// How loading the module went.
    public enum Outcome: Sendable, Equatable {
        /// Not asked for yet (no microphone opened), or not wanted.
        case notLoaded
        case loaded
        /// Why it could not load (e.g. "No such file or directory").
        case failed(String)
        /// Loaded, then gone: it unloads itself when one of its streams is refused (a microphone
        /// or output named but not there) or its connection ends.
        case stopped
    }

    /// The module's arguments (PipeWire's SPA-JSON): the WebRTC engine with gain control, the
    /// extended filter and the high-pass filter on, noise suppression as asked; mono at 48 kHz in
    /// 20 ms quanta (the call's frame); the capture side on `microphone` (nil: the default
    /// source) and the playback side on `output` (nil: the default sink).
    public func moduleArguments(microphone: String?, output: String?, nodes: Nodes) -> String {
        func quoted(_ s: String) -> String {
            "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        func target(_ node: String?) -> String {
            node.map { " target.object = \(quoted($0)) node.dont-reconnect = true" } ?? ""
        }
        let engine = [
            "webrtc.noise_suppression = \(noiseSuppression)", "webrtc.gain_control = true",
            "webrtc.extended_filter = true", "webrtc.high_pass_filter = true"
        ]
        return [
            "{ library.name = aec/libspa-aec-webrtc",
            "node.latency = 960/48000 audio.rate = 48000 audio.channels = 1 audio.position = [ MONO ]",
            "aec.args = { \(engine.joined(separator: " ")) }",
            "capture.props = { node.name = \(quoted(nodes.capture))\(target(microphone)) }",
            "source.props = { node.name = \(quoted(nodes.source)) node.description = \"sharectl microphone (echo-cancelled)\" }",
            "sink.props = { node.name = \(quoted(nodes.sink)) node.description = \"sharectl call playout (echo reference)\" }",
            "playback.props = { node.name = \(quoted(nodes.playback))\(target(output)) } }"
        ].joined(separator: " ")
    }

    /// What runs, for the status line and the stats' `audioProcessing`: "echo cancellation on
    /// (webrtc), noise suppression on", or why nothing does.
    public func statusText(_ outcome: Outcome) -> String {
        guard loadsModule else { return "echo cancellation off, noise suppression off" }
        switch outcome {
        case .loaded:
            let echo = echoCancellation ? "echo cancellation on (webrtc)" : "echo cancellation off"
            let noise =
                noiseSuppression
                ? "noise suppression on\(echoCancellation ? "" : " (webrtc)")" : "noise suppression off"
            return "\(echo), \(noise)"
        case .notLoaded:
            return "echo cancellation and noise suppression not started yet"
        case .failed:
            return "echo cancellation off, noise suppression off (PipeWire's echo-cancel module is missing)"
        case .stopped:
            return "echo cancellation off, noise suppression off (PipeWire's echo canceller stopped: "
                + "its microphone or output went away)"
        }
    }

    /// Said once when the module cannot load; the call goes on without it.
    public static func failureNotice(_ reason: String) -> String {
        "Echo cancellation and noise suppression are off: PipeWire's echo-cancel module did not load (\(reason)); "
            + "install \(package) (and PipeWire 0.3.65 or later)"
    }
}
