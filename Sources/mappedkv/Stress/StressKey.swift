/// A key of the stress workload: slot `slot` of child `child`, named `c<child>/k<slot>`.
///
/// Only its own child writes a key; the slot fixes the type of its values (``StressValueKind``).
struct StressKey: Hashable, Sendable, CustomStringConvertible {
    /// How many keys each child owns.
    static let slotsPerChild = 48
    /// The shared counter every child increments under the exclusive lock.
    static let counter = "counter"

    /// The index of the child that owns the key.
    var child: Int
    /// The key's slot, in `0..<slotsPerChild`.
    var slot: Int

    /// The key child `child` stores in slot `slot`.
    init(child: Int, slot: Int) {
        self.child = child
        self.slot = slot
    }

    /// Parses a key name written as `c<child>/k<slot>`; nil for anything else.
    init?(name: some StringProtocol) {
        guard name.hasPrefix("c"), let slash = name.firstIndex(of: "/") else { return nil }
        let childText = name[name.index(after: name.startIndex)..<slash]
        let slotText = name[name.index(after: slash)...]
        guard slotText.hasPrefix("k"), let child = Int(childText), child >= 0,
            let slot = Int(slotText.dropFirst()), (0..<Self.slotsPerChild).contains(slot),
            "c\(child)/k\(slot)" == name
        else { return nil }
        self.init(child: child, slot: slot)
    }

    /// The key's name in the store.
    var name: String { "c\(child)/k\(slot)" }

    /// The type of the key's values.
    var kind: StressValueKind { StressValueKind.allCases[slot % StressValueKind.allCases.count] }

    var description: String { name }
}
