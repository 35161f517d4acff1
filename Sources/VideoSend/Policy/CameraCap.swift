/// What a camera may use while a screen is shared beside it (DESIGN.md, "Send policies"): the
/// screen has the link first. When the share stops the camera gets its defaults back.
public enum CameraCap {
    public static let besideScreenBitrate = 500_000
    /// 360 lines: a 16:9 camera at 640×360 (its long side 640).
    public static let besideScreenLines = 360

    /// The long side that keeps a camera of this shape at `besideScreenLines` lines or fewer.
    public static func longSide(width: Int, height: Int) -> Int {
        guard width > 0, height > 0 else { return 640 }
        let short = min(width, height), long = max(width, height)
        return short <= besideScreenLines ? long : long * besideScreenLines / short
    }
}
