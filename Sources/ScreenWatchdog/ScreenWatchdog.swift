import ShareCore

/// The screen watchdog and its ladders live here (see README "Layout").
public enum ScreenWatchdogModule {
    public static let name = "ScreenWatchdog"
}
