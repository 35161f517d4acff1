import ShareCore
import Testing

@Suite struct BoundedMapTests {
    @Test func aFullMapEvictsTheEntrySeenLeastRecently() {
        var map = BoundedMap<Int, String>(capacity: 3)
        #expect(map.set("a", for: 1) == nil && map.set("b", for: 2) == nil && map.set("c", for: 3) == nil)
        #expect(map.value(for: 1) == "a", "1 seen again: 2 is now the oldest")
        let evicted = map.set("d", for: 4)
        #expect(evicted?.key == 2 && evicted?.value == "b")
        #expect(map.count == 3 && !map.contains(2))
        #expect(map.set("C", for: 3) == nil, "storing a known key evicts nothing")
        #expect(map.peek(1) == "a")
        #expect(map.set("e", for: 5)?.key == 1, "peek does not count as seen")
        #expect(map.removeValue(forKey: 4) == "d" && map.count == 2)
        #expect(Set(map.keys) == [3, 5])
    }
}
