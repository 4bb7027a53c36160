/// The three meta fields that change when any process writes a store: sequence, CRC and actual size.
///
/// Comparing the stamp in the shared meta mapping with the last one seen is how a process notices
/// other processes' writes (docs/FORMAT.md 6.3).
@usableFromInline
package struct MetaStamp: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// `m_sequence`: changes on every resize, rewrite, clear and other whole-file change.
    @usableFromInline package var sequence: UInt32
    /// `m_crcDigest`: changes on every append.
    @usableFromInline package var crcDigest: UInt32
    /// `m_actualSize`: changes on every append.
    @usableFromInline package var actualSize: UInt32

    /// A stamp from its fields.
    package init(sequence: UInt32, crcDigest: UInt32, actualSize: UInt32) {
        self.sequence = sequence
        self.crcDigest = crcDigest
        self.actualSize = actualSize
    }

    /// Reads the stamp from a stored meta struct (at least 112 bytes) without parsing the rest.
    @inlinable
    package init(stored bytes: UnsafeRawBufferPointer) {
        sequence = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: MetaInfo.Offset.sequence, as: UInt32.self))
        crcDigest = UInt32(
            littleEndian: bytes.loadUnaligned(fromByteOffset: MetaInfo.Offset.crcDigest, as: UInt32.self))
        actualSize = UInt32(
            littleEndian: bytes.loadUnaligned(fromByteOffset: MetaInfo.Offset.actualSize, as: UInt32.self))
    }

    /// The three fields, e.g. `seq 1 crc 0 size 0`.
    @usableFromInline package var description: String { "seq \(sequence) crc \(crcDigest) size \(actualSize)" }
}

extension MetaInfo {
    /// This meta's sequence, CRC and actual size as stored.
    package var stamp: MetaStamp { MetaStamp(sequence: sequence, crcDigest: crcDigest, actualSize: actualSize) }
}
