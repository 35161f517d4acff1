/// What the ScreenCast portal says it offers (its `version`, `AvailableSourceTypes` and
/// `AvailableCursorModes` properties), and the choices made from them.
public struct ScreenCastCapabilities: Sendable, Hashable {
    public struct SourceTypes: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let monitor = SourceTypes(rawValue: 1)
        public static let window = SourceTypes(rawValue: 2)
        public static let virtual = SourceTypes(rawValue: 4)

        public var names: [String] {
            [(Self.monitor, "monitor"), (.window, "window"), (.virtual, "virtual")].filter { contains($0.0) }.map(\.1)
        }
    }

    public struct CursorModes: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let hidden = CursorModes(rawValue: 1)
        public static let embedded = CursorModes(rawValue: 2)
        public static let metadata = CursorModes(rawValue: 4)

        public var names: [String] {
            [(Self.hidden, "hidden"), (.embedded, "embedded"), (.metadata, "metadata")].filter { contains($0.0) }.map(
                \.1)
        }
    }

    public var version: UInt32
    public var sourceTypes: SourceTypes
    public var cursorModes: CursorModes

    public init(version: UInt32, sourceTypes: SourceTypes, cursorModes: CursorModes) {
        self.version = version
        self.sourceTypes = sourceTypes
        self.cursorModes = cursorModes
    }

    /// Reads the properties as `org.freedesktop.DBus.Properties.GetAll` returns them.
    public init(properties: [String: PortalValue]) throws(PortalError) {
        guard let version = properties["version"]?.uint32 else {
            throw .noScreenCast("it has no version property")
        }
        self.version = version
        sourceTypes = SourceTypes(rawValue: properties["AvailableSourceTypes"]?.uint32 ?? 1)
        // Version 1 has no cursor modes: the cursor is whatever the backend does.
        cursorModes = CursorModes(rawValue: version >= 2 ? properties["AvailableCursorModes"]?.uint32 ?? 0 : 0)
    }

    /// The source types to ask for: the wanted ones the portal offers, else the monitor, else
    /// whatever it offers. nil when it offers nothing we know.
    public func sourceTypesToRequest(wanted: SourceTypes) -> SourceTypes? {
        let both = wanted.intersection(sourceTypes)
        if !both.isEmpty { return both }
        if sourceTypes.contains(.monitor) { return .monitor }
        let any = sourceTypes.intersection([.monitor, .window, .virtual])
        return any.isEmpty ? nil : any
    }

    /// The cursor mode to send, only one the portal offers (nil: send none). A wanted cursor is
    /// metadata (drawn by us, so it moves without a new frame), else embedded, else hidden; an
    /// unwanted one is hidden where offered.
    public func cursorModeToRequest(wantCursor: Bool) -> CursorModes? {
        let order: [CursorModes] = wantCursor ? [.metadata, .embedded, .hidden] : [.hidden, .embedded, .metadata]
        return order.first { cursorModes.contains($0) }
    }
}
