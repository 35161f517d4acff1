@testable import ScreenCapture
import Testing

/// The values the ScreenCast calls send and receive, through real GVariants.
@Suite struct GVariantConversionTests {
    @Test func selectSourcesOptionsAreAVardict() {
        let options: PortalValue = .dictionary([
            "handle_token": .string("sharectl42_1"), "types": .uint32(1), "multiple": .bool(false),
            "cursor_mode": .uint32(2), "persist_mode": .uint32(2), "restore_token": .string("7d129ae0-67e0")
        ])
        let call: PortalValue = .tuple([.objectPath("/org/freedesktop/portal/desktop/session/1_42/s"), options])
        #expect(GVariantConversion.typeString(call) == "(oa{sv})")
        #expect(GVariantConversion.roundTrip(call) == call)
    }

    @Test func startResultsKeepTheirStreams() {
        // Start's Response: (ua{sv}) with streams a(ua{sv}) and a restore token.
        let stream: PortalValue = .tuple([
            .uint32(36),
            .dictionary([
                "size": .tuple([.int32(1280), .int32(720)]),
                "source_type": .uint32(1)
            ])
        ])
        let response: PortalValue = .tuple([
            .uint32(0),
            .dictionary([
                "streams": .array([stream]), "restore_token": .string("7d129ae0"), "persist_mode": .uint32(2)
            ])
        ])
        #expect(GVariantConversion.typeString(response) == "(ua{sv})")
        let back = GVariantConversion.roundTrip(response)
        #expect(back == response)
        #expect(back.items?[1]["streams"]?.items?.first?.items?[0].uint32 == 36)
        #expect(back.items?[1]["streams"]?.items?.first?.items?[1]["size"]?.items?.compactMap(\.int) == [1280, 720])
    }

    @Test func everyBasicTypeSurvives() {
        let values: [PortalValue] = [
            .bool(true), .byte(7), .int32(-3), .uint32(3), .int64(-1 << 40), .uint64(1 << 40),
            .double(0.5), .string("ü"), .objectPath("/a/b"), .handle(0)
        ]
        for value in values { #expect(GVariantConversion.roundTrip(value) == value) }
        #expect(
            GVariantConversion.roundTrip(.array([.string("a"), .string("b")])) == .array([.string("a"), .string("b")]))
        #expect(GVariantConversion.typeString(.array([])) == "as")
    }
}
