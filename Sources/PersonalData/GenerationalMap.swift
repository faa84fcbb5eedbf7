import Dispatch

/// A map bounded by two generations: an approximate LRU without bookkeeping per hit.
///
/// Entries go into the young generation; when it holds `capacity`, it becomes the old one and the
/// previous old one is dropped; an entry found in the old generation moves back into the young
/// one. Entries in use so stay, however many new ones pass through, and at most `2 × capacity`
/// are held. Not synchronized: keep it inside a `Mutex`. The caches of this process (folded
/// streams, data keys, message keys) are such maps: the database stays the truth, so an entry
/// dropped is only read again.
///
/// A dropped generation is freed on a background queue, never by the caller: the caller holds its
/// cache's lock, and freeing 100,000 entries one by one took 70 ms (185 ms with glibc's malloc),
/// while every request that needed the cache waited for the lock (`scripts/bench-http`'s rounds
/// where a generation turned over had p99s of 100–400 ms).
public struct GenerationalMap<Key: Hashable, Value> {
    /// Entries per generation.
    public let capacity: Int
    private var young: [Key: Value] = [:]
    private var old: [Key: Value] = [:]

    public init(capacity: Int) {
        precondition(capacity > 0, "a generation holds at least one entry")
        self.capacity = capacity
    }

    /// Entries held (both generations).
    public var count: Int { young.count + old.count }

    /// The value of `key`; found in the old generation, it moves into the young one.
    public mutating func value(for key: Key) -> Value? {
        if let value = young[key] { return value }
        guard let value = old.removeValue(forKey: key) else { return nil }
        keep(value, for: key)
        return value
    }

    /// The value of `key`, where it stands.
    public func peek(_ key: Key) -> Value? { young[key] ?? old[key] }

    /// Sets the value of `key` (in the young generation).
    public mutating func set(_ value: Value, for key: Key) {
        old[key] = nil
        keep(value, for: key)
    }

    /// Sets every value of `entries` (in the young generation).
    public mutating func set(contentsOf entries: [Key: Value]) {
        for (key, value) in entries { set(value, for: key) }
    }

    /// Forgets `key`.
    public mutating func removeValue(for key: Key) {
        young[key] = nil
        old[key] = nil
    }

    /// Keeps only the entries `isIncluded` accepts.
    public mutating func filter(_ isIncluded: (Value) -> Bool) {
        let (keptYoung, keptOld) = (young.filter { isIncluded($0.value) }, old.filter { isIncluded($0.value) })
        let retired = Retired(young, old)
        (young, old) = (keptYoung, keptOld)
        retired.free()
    }

    public mutating func removeAll() {
        let retired = Retired(young, old)
        (young, old) = ([:], [:])
        retired.free()
    }

    private mutating func keep(_ value: Value, for key: Key) {
        if young.count >= capacity, young[key] == nil {
            let retired = Retired(old)
            old = young
            young = [:]
            young.reserveCapacity(capacity)
            retired.free()
        }
        young[key] = value
    }

    /// Generations taken out of the map, to be freed on a background queue. Made while the map
    /// still holds them and handed over once it no longer does, so the queue holds their last
    /// reference.
    private final class Retired: @unchecked Sendable {
        // Unchecked: once handed over, only the queue's closure touches it.
        private var generations: [[Key: Value]]

        init(_ generations: [Key: Value]...) { self.generations = generations.filter { !$0.isEmpty } }

        /// Frees the generations on a background queue (the queue empties them, whoever drops
        /// this box last).
        func free() {
            guard !generations.isEmpty else { return }
            DispatchQueue.global(qos: .utility).async { self.generations = [] }
        }
    }
}
