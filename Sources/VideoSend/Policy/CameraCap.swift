/// What a camera may use while a screen is shared beside it (DESIGN.md, "Send policies"): the
/// screen has the link first. When the share stops the camera gets its defaults back.
public enum CameraCap {
    public static let besideScreenBitrate = 500_000
    /// 360 lines: a 16:9 camera at 640×360 (its long side 640).
    public static let besideScreenLines = 360
    /// A camera's own limits when no screen is shared beside it.
    public static let defaultBitrate = 1_500_000
    public static let defaultLongSide = 1280

    /// The long side that keeps a camera of this shape at `besideScreenLines` lines or fewer.
    public static func longSide(width: Int, height: Int) -> Int {
        guard width > 0, height > 0 else { return 640 }
        let short = min(width, height), long = max(width, height)
        return short <= besideScreenLines ? long : long * besideScreenLines / short
    }

    /// The limits for a camera's encoder: beside a shared screen the cap (for a camera whose
    /// frames are `width`×`height`; 0×0 before the first frame), never above its defaults;
    /// otherwise its defaults.
    public static func limits(
        besideScreen: Bool, width: Int, height: Int, defaultBitrate: Int = defaultBitrate,
        defaultLongSide: Int = defaultLongSide
    ) -> (maxBitrate: Int, maxLongSide: Int) {
        guard besideScreen else { return (defaultBitrate, defaultLongSide) }
        return (min(defaultBitrate, besideScreenBitrate), min(defaultLongSide, longSide(width: width, height: height)))
    }
}
