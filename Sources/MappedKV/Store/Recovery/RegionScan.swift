import MappedKVCrypto
import MappedKVFormat

/// The record boundaries of a data region with the running CRC at each: what a recovery can
/// verify when the meta's CRC does not match its size.
///
/// A boundary's CRC covers the stored bytes (the ciphertext, for an encrypted store) from the
/// region's start to the boundary, so a boundary whose CRC equals one the meta recorded marks
/// exactly the region that CRC was computed over.
struct RegionScan {
    /// One record boundary: the offset just past the holder or a record, and the CRC up to it.
    struct Boundary: Equatable {
        var end: Int
        var crc: UInt32
    }

    /// The region's plain text (decrypted for an encrypted store), as far as it was scanned.
    let plain: [UInt8]
    /// Every boundary from the empty prefix on, ascending.
    let boundaries: [Boundary]

    /// Scans `stored` (the data file past its 4-byte header) from offset 0 up to the first
    /// undecodable record, decrypting with `key` from the meta's IV.
    init(stored: UnsafeRawBufferPointer, meta: MetaInfo, key: CryptKey?) throws(CryptoFailure) {
        var plain = [UInt8](stored)
        if let key { try meta.regionStream(for: key).decrypt(&plain) }
        var boundaries = [Boundary(end: 0, crc: 0)]
        var running: UInt32 = 0
        var position = 0
        func advance(to end: Int) {
            running = CRC32.update(running, UnsafeRawBufferPointer(rebasing: stored[position..<end]))
            position = end
            boundaries.append(Boundary(end: end, crc: running))
        }
        plain.withUnsafeBytes { region in
            guard let holderLength = ItemSizeHolder.length(in: region) else { return }
            advance(to: holderLength)
            _ = RecordDecoder.decode(region, from: holderLength, skipsHolder: false) { record in
                advance(to: record.end)
            }
        }
        self.plain = plain
        self.boundaries = boundaries
    }

    /// The furthest boundary whose CRC is `crc`, if any.
    func furthestBoundary(withCRC crc: UInt32) -> Int? {
        boundaries.last { $0.crc == crc }?.end
    }

    /// The CRC at `end` if it is a boundary.
    func crc(atBoundary end: Int) -> UInt32? {
        var low = 0
        var high = boundaries.count
        while low < high {
            let middle = (low + high) / 2
            if boundaries[middle].end < end { low = middle + 1 } else { high = middle }
        }
        return low < boundaries.count && boundaries[low].end == end ? boundaries[low].crc : nil
    }

    /// The records that still decode in `plain[start..<end]` (from the holder on if `start` is 0),
    /// their distinct keys, sorted, and the offset where the last of them ends (`start` if none):
    /// what a recovery keeping `start` bytes drops.
    func records(in range: Range<Int>) -> (count: Int, keys: [String], end: Int) {
        let end = min(range.upperBound, plain.count)
        guard range.lowerBound < end else { return (0, [], range.lowerBound) }
        var keys: Set<String> = []
        var count = 0
        var lastEnd = range.lowerBound
        plain.withUnsafeBytes { bytes in
            let region = UnsafeRawBufferPointer(rebasing: bytes[0..<end])
            _ = RecordDecoder.decode(region, from: range.lowerBound, skipsHolder: range.lowerBound == 0) { record in
                count += 1
                keys.insert(String(decoding: region[record.keyRange], as: UTF8.self))
                lastEnd = record.valueStart + record.valueLength
            }
        }
        return (count, keys.sorted(), lastEnd)
    }
}
