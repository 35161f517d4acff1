extension Duration {
    /// "10 s", "1.5 s", "250 ms": a duration as a person reads it in a message.
    package var secondsText: String {
        let (seconds, attoseconds) = components
        if attoseconds == 0 { return "\(seconds) s" }
        let ms = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        if ms < 1000 { return "\(ms) ms" }
        return "\(Double(ms) / 1000) s"
    }
}
