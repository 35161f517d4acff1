/// Levels are measured, not inferred: the peak of a block of samples in dBFS (−120 for digital
/// silence, 0 for full scale).
public enum AudioLevel {
    public static let silence = -120.0

    public static func peakDbfs(_ samples: [Int16]) -> Double {
        var peak = 0
        for sample in samples { peak = max(peak, abs(Int(sample))) }
        guard peak > 0 else { return silence }
        return max(silence, 20 * log10(Double(peak) / 32768))
    }
}

#if canImport(Glibc)
    import Glibc
#endif
