import CallsClient
import Testing
import StatsLine
@testable import CallMedia

/// What sharectl asks of PipeWire's echo-cancel module and what it says about it: the module's
/// arguments (PipeWire 0.3.65's names), which parts run for each pair of flags, and the words
/// when the module cannot load.
@Suite struct EchoCancelSettingsTests {
    let nodes = EchoCancelSettings.Nodes(processID: 42)

    @Test func nodesAreNamedPerProcess() {
        #expect(nodes.capture == "sharectl-echo-cancel-capture.42")
        #expect(nodes.source == "sharectl-echo-cancel-source.42")
        #expect(nodes.sink == "sharectl-echo-cancel-sink.42")
        #expect(nodes.playback == "sharectl-echo-cancel-playback.42")
    }

    @Test func argumentsAskForTheWebRTCEngineWithEveryPartOn() {
        let arguments = EchoCancelSettings().moduleArguments(microphone: nil, output: nil, nodes: nodes)
        // 0.3.65 takes library.name (aec.method is refused with a warning there).
        #expect(arguments.contains("library.name = aec/libspa-aec-webrtc"))
        #expect(!arguments.contains("aec.method"))
        #expect(
            arguments.contains(
                "aec.args = { webrtc.noise_suppression = true webrtc.gain_control = true "
                    + "webrtc.extended_filter = true webrtc.high_pass_filter = true }"))
        #expect(arguments.contains("node.latency = 960/48000"))
        #expect(arguments.contains("audio.channels = 1 audio.position = [ MONO ]"))
        // The default source and sink: no target, so WirePlumber links them.
        #expect(!arguments.contains("target.object"))
        #expect(arguments.contains("capture.props = { node.name = \"sharectl-echo-cancel-capture.42\" }"))
        #expect(arguments.contains("playback.props = { node.name = \"sharectl-echo-cancel-playback.42\" } }"))
        #expect(arguments.hasPrefix("{ ") && arguments.hasSuffix(" }"))
    }

    @Test func namedNodesAreTargetedAndQuoted() {
        let arguments = EchoCancelSettings(noiseSuppression: false)
            .moduleArguments(microphone: "usb \"mic\"", output: "alsa_output.pci", nodes: nodes)
        #expect(arguments.contains("webrtc.noise_suppression = false"))
        #expect(
            arguments.contains(
                "capture.props = { node.name = \"sharectl-echo-cancel-capture.42\" "
                    + "target.object = \"usb \\\"mic\\\"\" node.dont-reconnect = true }"))
        #expect(
            arguments.contains(
                "playback.props = { node.name = \"sharectl-echo-cancel-playback.42\" "
                    + "target.object = \"alsa_output.pci\" node.dont-reconnect = true }"))
    }

    @Test func flagsDecideWhatRunsAndWhatIsSaid() {
        let both = EchoCancelSettings()
        let noEcho = EchoCancelSettings(echoCancellation: false)
        let noNoise = EchoCancelSettings(noiseSuppression: false)
        let neither = EchoCancelSettings(echoCancellation: false, noiseSuppression: false)
        #expect(both.loadsModule && noEcho.loadsModule && noNoise.loadsModule && !neither.loadsModule)
        #expect(both.statusText(.loaded) == "echo cancellation on (webrtc), noise suppression on")
        #expect(noEcho.statusText(.loaded) == "echo cancellation off, noise suppression on (webrtc)")
        #expect(noNoise.statusText(.loaded) == "echo cancellation on (webrtc), noise suppression off")
        #expect(neither.statusText(.notLoaded) == "echo cancellation off, noise suppression off")
        #expect(both.statusText(.notLoaded) == "echo cancellation and noise suppression not started yet")
        #expect(
            both.statusText(.stopped)
                == "echo cancellation off, noise suppression off (PipeWire's echo canceller stopped: "
                + "its microphone or output went away)")
    }

    @Test func aModuleThatCannotLoadIsSaidWithThePackage() {
        #expect(
            EchoCancelSettings().statusText(.failed("No such file or directory"))
                == "echo cancellation off, noise suppression off (PipeWire's echo-cancel module is missing)")
        #expect(
            EchoCancelSettings.failureNotice("No such file or directory")
                == "Echo cancellation and noise suppression are off: PipeWire's echo-cancel module did not load "
                + "(No such file or directory); install libspa-0.2-modules (and PipeWire 0.3.65 or later)")
    }

    @Test func theCallLineSaysWhatRunsAndLeavesItOutWithoutAMicrophone() {
        var line = CallStatsLine()
        #expect(!line.statusLines.contains { $0.hasPrefix("Microphone:") })
        line.audioProcessing = EchoCancelSettings().statusText(.loaded)
        #expect(line.statusLines.contains("Microphone: echo cancellation on (webrtc), noise suppression on"))
    }
}
