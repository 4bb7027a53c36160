/// How a store is opened.
public struct Configuration: Sendable, Equatable {
    /// Open without writing anything; both files must exist.
    public var isReadOnly: Bool
    /// The data file's minimum size in bytes, rounded up to whole pages (MMKV's `expectedCapacity`).
    public var expectedCapacity: Int

    /// Creates a configuration; the defaults open read-write with a one-page file.
    public init(isReadOnly: Bool = false, expectedCapacity: Int = 0) {
        self.isReadOnly = isReadOnly
        self.expectedCapacity = expectedCapacity
    }
}
