#if canImport(Glibc)
    import Glibc
#endif

/// A steady sine tone for `--audio synthetic` and the gates: 20 ms frames of interleaved samples,
/// continuous in phase from one frame to the next.
public struct SyntheticTone: Sendable {
    public let frequency: Double
    public let amplitude: Double
    public let channels: Int
    private var phase: Double = 0

    /// `levelDbfs` is the tone's peak (−20 dBFS by default).
    public init(frequency: Double = 440, levelDbfs: Double = -20, channels: Int = 2) {
        self.frequency = frequency
        self.amplitude = 32767 * pow(10, levelDbfs / 20)
        self.channels = channels
    }

    public mutating func nextFrame(samples: Int = OpusAudioEncoder.frameSamples) -> [Int16] {
        var out = [Int16](repeating: 0, count: samples * channels)
        let step = 2 * Double.pi * frequency / Double(OpusAudioEncoder.sampleRate)
        for i in 0..<samples {
            let value = Int16(amplitude * sin(phase))
            for c in 0..<channels { out[i * channels + c] = value }
            phase += step
            if phase > 2 * Double.pi { phase -= 2 * Double.pi }
        }
        return out
    }
}
