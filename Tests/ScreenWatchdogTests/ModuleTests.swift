import ScreenWatchdog
import Testing

@Suite struct ModuleTests {
    @Test func moduleIsPresent() { #expect(ScreenWatchdogModule.name == "ScreenWatchdog") }
}
