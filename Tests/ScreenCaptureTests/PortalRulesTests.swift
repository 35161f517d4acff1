import Foundation
import ScreenCapture
import Testing

@Suite struct RestoreTokenPolicyTests {
    @Test func version4PersistsUntilRevokedAndSendsTheSavedToken() throws {
        let plan = try RestoreTokenPolicy.plan(version: 4, storedToken: "3f1c-uuid", unattended: false)
        #expect(plan == .init(persistMode: 2, restoreToken: "3f1c-uuid", mayWaitForPerson: true))
    }

    @Test func beforeVersion4NothingIsPersistedAndUnattendedIsRefused() throws {
        let plan = try RestoreTokenPolicy.plan(version: 3, storedToken: "t", unattended: false)
        #expect(plan.persistMode == nil && plan.restoreToken == nil)
        #expect(throws: PortalError.tooOld(version: 3, needed: 4, feature: "unattended use (restore tokens)")) {
            try RestoreTokenPolicy.plan(version: 3, storedToken: "t", unattended: true)
        }
    }

    @Test func unattendedNeverWaitsForAPerson() throws {
        let withToken = try RestoreTokenPolicy.plan(version: 5, storedToken: "t", unattended: true)
        #expect(withToken.restoreToken == "t" && !withToken.mayWaitForPerson)
        let without = try RestoreTokenPolicy.plan(version: 5, storedToken: "", unattended: true)
        #expect(without.restoreToken == nil && !without.mayWaitForPerson)
    }

    @Test func outcomes() {
        #expect(RestoreTokenPolicy.outcome(sent: nil, received: "a") == .granted(save: "a"))
        #expect(RestoreTokenPolicy.outcome(sent: "a", received: "a") == .restored(save: "a"))
        #expect(RestoreTokenPolicy.outcome(sent: "a", received: "b") == .replacedStale(save: "b"))
        #expect(RestoreTokenPolicy.outcome(sent: "a", received: nil) == .none)
        #expect(RestoreTokenPolicy.outcome(sent: nil, received: "") == .none)
    }

    @Test func aRefusedTokenIsRetriedWithoutItOnlyWhenAttended() {
        let rejected = PortalError.callFailed(
            method: "ScreenCast.SelectSources", errorName: "org.freedesktop.DBus.Error.InvalidArgs",
            message: "Restore token is not a valid UUID")
        #expect(RestoreTokenPolicy.retryWithoutToken(after: rejected, tokenSent: true, unattended: false))
        #expect(!RestoreTokenPolicy.retryWithoutToken(after: rejected, tokenSent: true, unattended: true))
        #expect(!RestoreTokenPolicy.retryWithoutToken(after: rejected, tokenSent: false, unattended: false))
        // A person cancelling the dialog is an answer, not a stale token.
        #expect(
            !RestoreTokenPolicy.retryWithoutToken(
                after: .refused(step: "Start", code: 1), tokenSent: true, unattended: false))
    }
}

@Suite struct ScreenCastCapabilitiesTests {
    @Test func readsThePropertiesAsGetAllReturnsThem() throws {
        let caps = try ScreenCastCapabilities(properties: [
            "version": .uint32(4), "AvailableSourceTypes": .uint32(1), "AvailableCursorModes": .uint32(3)
        ])
        #expect(caps.version == 4 && caps.sourceTypes == .monitor && caps.cursorModes == [.hidden, .embedded])
        #expect(caps.sourceTypes.names == ["monitor"] && caps.cursorModes.names == ["hidden", "embedded"])
        #expect(throws: PortalError.self) { try ScreenCastCapabilities(properties: [:]) }
    }

    @Test func cursorModeIsOnlyOneOffered() {
        let wlr = ScreenCastCapabilities(version: 4, sourceTypes: .monitor, cursorModes: [.hidden, .embedded])
        #expect(wlr.cursorModeToRequest(wantCursor: true) == .embedded)
        #expect(wlr.cursorModeToRequest(wantCursor: false) == .hidden)
        let all = ScreenCastCapabilities(
            version: 4, sourceTypes: [.monitor, .window], cursorModes: [.hidden, .embedded, .metadata])
        #expect(all.cursorModeToRequest(wantCursor: true) == .metadata)
        let v1 = ScreenCastCapabilities(version: 1, sourceTypes: .monitor, cursorModes: [])
        #expect(v1.cursorModeToRequest(wantCursor: true) == nil)
    }

    @Test func sourceTypesFallBackToWhatIsOffered() {
        let monitorOnly = ScreenCastCapabilities(version: 4, sourceTypes: .monitor, cursorModes: [])
        #expect(monitorOnly.sourceTypesToRequest(wanted: .window) == .monitor)
        let windows = ScreenCastCapabilities(version: 4, sourceTypes: [.window, .virtual], cursorModes: [])
        #expect(windows.sourceTypesToRequest(wanted: .window) == .window)
        #expect(windows.sourceTypesToRequest(wanted: .monitor) == [.window, .virtual])
        let none = ScreenCastCapabilities(version: 4, sourceTypes: [], cursorModes: [])
        #expect(none.sourceTypesToRequest(wanted: .monitor) == nil)
    }

    @Test func errorsSayWhatIsMissingAndHowToGetIt() {
        #expect(PortalError.noPortal("x").description.contains("install xdg-desktop-portal"))
        #expect(PortalError.noScreenCast("x").description.contains("xdg-desktop-portal-wlr"))
        #expect(PortalError.pickerNeeded("no token").description.contains("run once without --unattended"))
        #expect(PortalError.tooOld(version: 3, needed: 4, feature: "f").description.contains("version 3 is too old"))
    }
}

@Suite struct RestoreTokenStoreTests {
    @Test func savesAndLoadsPrivately() throws {
        let directory = NSTemporaryDirectory() + "token-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = RestoreTokenStore(path: directory + "/nested/token")
        #expect(store.load() == nil)
        try store.save("0b9c2d1e-uuid")
        #expect(store.load() == "0b9c2d1e-uuid")
        let mode = try FileManager.default.attributesOfItem(atPath: store.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        store.clear()
        #expect(store.load() == nil)
    }

    @Test func defaultPathFollowsXDGStateHome() {
        #expect(
            RestoreTokenStore.defaultPath(environment: ["XDG_STATE_HOME": "/s", "HOME": "/h"])
                == "/s/sharectl/portal-restore-token")
        #expect(
            RestoreTokenStore.defaultPath(environment: ["HOME": "/h"])
                == "/h/.local/state/sharectl/portal-restore-token")
        #expect(
            RestoreTokenStore.defaultPath(environment: ["XDG_STATE_HOME": "relative", "HOME": "/h"]).hasPrefix("/h/"))
    }
}

@Suite struct FormatNegotiationTests {
    @Test func dmabufFirstWhereImportableAndAFailedImportDropsTheModifier() {
        var negotiation = FormatNegotiation(dmabufImportable: true)
        #expect(negotiation.offer.dmabufModifiers == [FormatNegotiation.linearModifier])
        #expect(negotiation.offer.formats == [.bgrx, .bgra, .rgbx, .rgba])
        let changed = negotiation.importFailed(modifier: 0)
        #expect(changed)
        #expect(negotiation.offer.dmabufModifiers.isEmpty)  // SHM only now
        let again = negotiation.importFailed(modifier: 0)
        #expect(!again)  // nothing left to renegotiate
        #expect(FormatNegotiation(dmabufImportable: false).offer.dmabufModifiers.isEmpty)
    }
}
