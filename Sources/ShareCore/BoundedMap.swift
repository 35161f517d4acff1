/// A dictionary of at most `capacity` entries: storing a new key when it is full first evicts the
/// entry seen least recently (stored, or read through `value(for:)`). For per-SSRC state a peer
/// could otherwise grow without end; capacities are small (tens), so eviction scans them all.
/// A pure value.
public struct BoundedMap<Key: Hashable, Value> {
    public let capacity: Int
    private var values: [Key: Value] = [:]
    /// When each key was last seen, on a counter.
    private var seen: [Key: UInt64] = [:]
    private var tick: UInt64 = 0

    public init(capacity: Int) {
        precondition(capacity > 0, "a bounded map holds at least one entry")
        self.capacity = capacity
    }

    public var count: Int { values.count }
    public var isEmpty: Bool { values.isEmpty }
    public var keys: [Key] { Array(values.keys) }
    /// Every entry, in no particular order.
    public var entries: [(key: Key, value: Value)] { values.map { ($0.key, $0.value) } }

    /// The value for `key` without marking it seen.
    public func peek(_ key: Key) -> Value? { values[key] }

    public func contains(_ key: Key) -> Bool { values[key] != nil }

    /// The value for `key`, marking it seen.
    public mutating func value(for key: Key) -> Value? {
        guard let value = values[key] else { return nil }
        tick &+= 1
        seen[key] = tick
        return value
    }

    /// Stores `value` for `key` (marking it seen) and returns the entry evicted to make room, if any.
    @discardableResult
    public mutating func set(_ value: Value, for key: Key) -> (key: Key, value: Value)? {
        tick &+= 1
        var evicted: (key: Key, value: Value)?
        if values[key] == nil, values.count >= capacity, let oldest = seen.min(by: { $0.value < $1.value })?.key,
            let old = removeValue(forKey: oldest)
        {
            evicted = (oldest, old)
        }
        values[key] = value
        seen[key] = tick
        return evicted
    }

    @discardableResult
    public mutating func removeValue(forKey key: Key) -> Value? {
        seen[key] = nil
        return values.removeValue(forKey: key)
    }
}

extension BoundedMap: Sendable where Key: Sendable, Value: Sendable {}

extension BoundedMap: Equatable where Value: Equatable {
    /// Same capacity and entries; when each was seen does not count.
    public static func == (a: Self, b: Self) -> Bool { a.capacity == b.capacity && a.values == b.values }
}
