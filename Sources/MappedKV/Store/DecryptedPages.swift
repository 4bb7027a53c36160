import MappedKVCrypto
import MappedKVIO

/// The plaintext of an encrypted store's region for reads through the mappings (docs/FORMAT.md
/// 12.6): a private buffer as long as the data file, each 4 KiB page of it decrypted from the
/// shared ciphertext the first time a read reaches it.
///
/// Untouched pages cost no memory (``AnonymousMemory``), so a process holds the plaintext of the
/// pages it has read and nothing more; one that reads every key ends up holding what the private
/// copy of a decoding open holds.
///
/// A decrypted page stays valid while the bytes it was decrypted from do: bytes before the
/// region's end change only under a new sequence (which drops the pages with the mapped state),
/// and the page that held the old end is forgotten when records are appended after it.
final class DecryptedPages {
    static let pageSize = 4_096

    private let memory: AnonymousMemory
    private let decryptor: CFBSegmentDecryptor
    /// One bit per page, set once the page is decrypted (as ``MappedIndexFile``'s page bits).
    private let decrypted: UnsafeMutableBufferPointer<UInt64>

    /// The buffer (``memory``'s bytes, kept here for the reads' checks).
    private let base: UnsafeMutableRawPointer
    /// How many bytes of region the buffer can hold.
    let capacity: Int

    /// A buffer for a region of up to `capacity` bytes encrypted from `iv` under `key`, or nil if
    /// the memory or the cipher cannot be had.
    init?(key: CryptKey, iv: [UInt8], capacity: Int) {
        guard let memory = try? AnonymousMemory(length: capacity),
            let decryptor = try? CFBSegmentDecryptor(key: key.aesKey, iv: iv)
        else { return nil }
        guard let base = memory.bytes.baseAddress else { return nil }
        self.memory = memory
        self.decryptor = decryptor
        self.base = base
        self.capacity = memory.bytes.count
        decrypted = .allocate(capacity: (memory.bytes.count / Self.pageSize + 64) / 64)
        decrypted.initialize(repeating: 0)
    }

    deinit { decrypted.deallocate() }

    /// The plaintext of the region's first `count` bytes; only the pages that ``prepare(_:in:)``
    /// covered hold it.
    func plaintext(count: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base, count: min(count, capacity))
    }

    /// Decrypts the pages that cover `range` of `ciphertext` (the mapped region, from its first
    /// byte) and are not decrypted yet; false if libcrypto failed. The range is clamped to the
    /// ciphertext, and a page at its end is decrypted as far as the ciphertext goes.
    func prepare(_ range: Range<Int>, in ciphertext: UnsafeRawBufferPointer) -> Bool {
        let end = min(range.upperBound, ciphertext.count, capacity)
        guard range.lowerBound < end, range.lowerBound >= 0 else { return true }
        var page = range.lowerBound / Self.pageSize
        while page * Self.pageSize < end {
            if decrypted[page &>> 6] & (1 &<< UInt64(page & 63)) == 0 {
                guard decrypt(page: page, in: ciphertext) else { return false }
            }
            page += 1
        }
        return true
    }

    @inline(never)
    private func decrypt(page: Int, in ciphertext: UnsafeRawBufferPointer) -> Bool {
        let start = page * Self.pageSize
        let end = min(start + Self.pageSize, ciphertext.count, capacity)
        do throws(CryptoFailure) {
            try decryptor.decrypt(ciphertext, range: start..<end, into: base + start)
        } catch {
            return false
        }
        decrypted[page &>> 6] |= 1 &<< UInt64(page & 63)
        return true
    }

    /// How many pages are decrypted.
    var decryptedPageCount: Int { decrypted.reduce(0) { $0 + $1.nonzeroBitCount } }

    /// Forgets the pages from the one that holds `offset` on: records were appended there, after
    /// ciphertext that a page decrypted before held only in part.
    func forget(from offset: Int) {
        var page = max(offset, 0) / Self.pageSize
        while page / 64 < decrypted.count, page * Self.pageSize < capacity {
            decrypted[page &>> 6] &= ~(1 &<< UInt64(page & 63))
            page += 1
        }
    }
}

/// The region as a read through the mappings sees it: the data mapping itself for a plain store;
/// for an encrypted one, its ``DecryptedPages`` over the mapped ciphertext, which a lookup
/// prepares before it reads a record.
struct MappedPlaintext {
    /// The region's plaintext (for an encrypted store, valid where prepared).
    let bytes: UnsafeRawBufferPointer
    /// Not retained: a view lives only within one read, under the store's lock, while the store
    /// holds the pages (a retain and release of them per copy of the view showed in the
    /// open-scaling bench's encrypted gets).
    private unowned(unsafe) let pages: DecryptedPages?
    private let ciphertext: UnsafeRawBufferPointer

    /// The plaintext view of `region` (the mapped region, `count` bytes), through `pages` if the
    /// store is encrypted.
    init(region: UnsafeRawBufferPointer, pages: DecryptedPages?) {
        self.pages = pages
        ciphertext = region
        bytes = pages?.plaintext(count: region.count) ?? region
    }

    /// Makes `range` of ``bytes`` hold the plaintext; false if it could not (libcrypto failed).
    func prepare(_ range: Range<Int>) -> Bool {
        guard let pages else { return true }
        return pages.prepare(range, in: ciphertext)
    }
}
