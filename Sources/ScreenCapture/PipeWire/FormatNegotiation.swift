/// Which formats a screen consumer offers PipeWire, and how that changes when a DMA-BUF cannot
/// be imported. Pure: the stream builds its EnumFormat params from `offer`.
///
/// DMA-BUF with modifiers goes first where it can be imported (a render node exists and the
/// modifier is one we can read through a plain mapping); SHM (memfd or pointer) is always offered
/// after it. A failed import drops that modifier; with none left only SHM is offered.
public struct FormatNegotiation: Sendable, Hashable {
    /// The raw formats we take, best first (as PipeWire's `spa_video_format` names them).
    public enum Format: String, Sendable, Hashable, CaseIterable {
        case bgrx = "BGRx", bgra = "BGRA", rgbx = "RGBx", rgba = "RGBA"
    }

    /// DRM_FORMAT_MOD_LINEAR: rows in memory order, readable after mmap.
    public static let linearModifier: UInt64 = 0

    public private(set) var formats: [Format] = Format.allCases
    public private(set) var modifiers: [UInt64]

    /// `dmabufImportable`: whether this machine can import DMA-BUFs at all (a render node).
    public init(dmabufImportable: Bool) {
        modifiers = dmabufImportable ? [Self.linearModifier] : []
    }

    public struct Offer: Sendable, Hashable {
        /// DMA-BUF EnumFormats (one per format, these modifiers) before the SHM one; empty: SHM only.
        public var dmabufModifiers: [UInt64]
        public var formats: [Format]
    }

    public var offer: Offer { Offer(dmabufModifiers: modifiers, formats: formats) }

    /// An import of `modifier` failed: drop it. True when the offer changed (renegotiate).
    public mutating func importFailed(modifier: UInt64) -> Bool {
        guard let index = modifiers.firstIndex(of: modifier) else { return false }
        modifiers.remove(at: index)
        return true
    }

    /// Buffer data types to accept for a negotiated format: DMA-BUF only with a modifier, else
    /// memfd or a pointer.
    public static func acceptsDMABUF(formatHasModifier: Bool) -> Bool { formatHasModifier }
}
