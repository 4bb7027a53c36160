import CCRC32
import CZlib
import Foundation
import MappedKVFormat
import Testing

/// zlib's `crc32_z`, the reference every folding result must equal.
private func zlibCRC(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
    guard let base = bytes.baseAddress else { return crc }
    return UInt32(truncatingIfNeeded: crc32_z(UInt(crc), base.assumingMemoryBound(to: Bytef.self), bytes.count))
}

/// `mkv_crc32_fold_limited` over a buffer.
private func fold(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer, maxWidth: Int32 = 256) -> UInt32 {
    mkv_crc32_fold_limited(crc, bytes.baseAddress, bytes.count, maxWidth)
}

/// The bitwise loop (0), the 128-bit path and the 256-bit path; paths the CPU lacks fall back to narrower ones.
private let widths: [Int32] = [0, 128, 256]

/// A starting CRC: 0 and all ones now and then, else random.
private func startingCRC(using rng: inout SplitMix64) -> UInt32 {
    switch Int.random(in: 0..<8, using: &rng) {
    case 0: return 0
    case 1: return 0xFFFF_FFFF
    default: return UInt32.random(in: 0...UInt32.max, using: &rng)
    }
}

/// The flags line of /proc/cpuinfo, or nil where there is none.
private func cpuFlags() -> Set<Substring>? {
    guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
        let line = text.split(separator: "\n").first(where: { $0.hasPrefix("flags") })
    else { return nil }
    return Set(line.split(separator: " "))
}

@Suite("CRC-32 folding")
struct CRC32FoldTests {
    @Test("the folding path is detected and used where the CPU has PCLMULQDQ")
    func detection() {
        #if arch(x86_64)
        #expect(mkv_crc32_fold_available() == 1, "this x86-64 CPU should run the folding path")
        if let flags = cpuFlags() {
            #expect(flags.contains("pclmulqdq") == (mkv_crc32_fold_available() == 1))
            let wide = flags.contains("vpclmulqdq") && flags.contains("avx2")
            #expect(mkv_crc32_fold_width() == (wide ? 256 : 128))
        }
        #else
        #expect(mkv_crc32_fold_available() == 0)
        #expect(mkv_crc32_fold_width() == 0)
        #endif
    }

    @Test("the standard check value and the empty input, on every path")
    func checkValue() {
        let check = Array("123456789".utf8)
        let long = [UInt8](repeating: 0x31, count: 100)
        for width in widths {
            check.withUnsafeBytes { #expect(fold(0, $0, maxWidth: width) == 0xCBF4_3926) }
            long.withUnsafeBytes { #expect(fold(0, $0, maxWidth: width) == zlibCRC(0, $0)) }
            for crc: UInt32 in [0, 1, 0xCBF4_3926, 0xFFFF_FFFF] {
                #expect(mkv_crc32_fold_limited(crc, nil, 0, width) == crc)
            }
        }
        #expect(CRC32.checksum("123456789".utf8) == 0xCBF4_3926)
    }

    @Test("every length 0...1024 at every offset 0...15 from random starting CRCs matches zlib")
    func everyLengthAndOffset() {
        var rng = SplitMix64(seed: 0xF01D_C8C3)
        let data = rng.bytes(count: 1024 + 16)
        var failures: [String] = []
        data.withUnsafeBytes { all in
            for length in 0...1024 {
                for offset in 0...15 {
                    let bytes = UnsafeRawBufferPointer(rebasing: all[offset..<(offset + length)])
                    let crc = startingCRC(using: &rng)
                    let expected = zlibCRC(crc, bytes)
                    if CRC32.update(crc, bytes) != expected {
                        failures.append("update: length \(length) offset \(offset) crc \(crc)")
                    }
                    for width in widths where fold(crc, bytes, maxWidth: width) != expected {
                        failures.append("width \(width): length \(length) offset \(offset) crc \(crc)")
                    }
                }
            }
        }
        #expect(failures.isEmpty, "\(failures.count) mismatches, first: \(failures.prefix(10))")
    }

    @Test("large random buffers match zlib", arguments: [1 << 20, (1 << 20) + 13, 65536 + 7, 4096 + 15])
    func largeBuffers(_ count: Int) {
        var rng = SplitMix64(seed: 0xB16_C8C3 &+ UInt64(count))
        let data = rng.bytes(count: count + 3)
        data.withUnsafeBytes { all in
            for offset in [0, 3] {
                let bytes = UnsafeRawBufferPointer(rebasing: all[offset..<(offset + count)])
                let crc = startingCRC(using: &rng)
                let expected = zlibCRC(crc, bytes)
                #expect(CRC32.update(crc, bytes) == expected)
                for width in widths where width != 0 {
                    #expect(fold(crc, bytes, maxWidth: width) == expected, "width \(width)")
                }
            }
        }
    }

    @Test("updates chained over random splits equal one update")
    func chainedSplits() {
        var rng = SplitMix64(seed: 0xC4A1_2ED0)
        for round in 0..<130 {
            let count = round < 100 ? Int.random(in: 0...3000, using: &rng) : Int.random(in: 0...(1 << 17), using: &rng)
            let data = rng.bytes(count: count)
            let start = startingCRC(using: &rng)
            data.withUnsafeBytes { bytes in
                let oneShot = CRC32.update(start, bytes)
                #expect(oneShot == zlibCRC(start, bytes))
                var cuts = (0..<Int.random(in: 1...6, using: &rng)).map { _ in Int.random(in: 0...count, using: &rng) }
                cuts = [0] + cuts.sorted() + [count]
                var crc = start
                var folded = start
                for (from, to) in zip(cuts, cuts.dropFirst()) {
                    let piece = UnsafeRawBufferPointer(rebasing: bytes[from..<to])
                    crc = CRC32.update(crc, piece)
                    folded = fold(folded, piece)
                }
                #expect(crc == oneShot, "count \(count) cuts \(cuts)")
                #expect(folded == oneShot, "count \(count) cuts \(cuts)")
            }
        }
    }

    #if canImport(Glibc)
    @Test("reads stay inside the buffer: data flush against inaccessible pages on both sides")
    func guardPages() throws {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let mapping = mmap(nil, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        let base = try #require(mapping.flatMap { $0 == UnsafeMutableRawPointer(bitPattern: -1) ? nil : $0 })
        defer { munmap(base, 3 * page) }
        #expect(mprotect(base, page, PROT_NONE) == 0)
        #expect(mprotect(base + 2 * page, page, PROT_NONE) == 0)
        let middle = UnsafeMutableRawBufferPointer(start: base + page, count: page)
        var rng = SplitMix64(seed: 0x9A6E)
        for index in 0..<page { middle[index] = UInt8.random(in: 0...255, using: &rng) }
        var failures: [Int] = []
        for length in 0...min(page, 1100) {
            let atStart = UnsafeRawBufferPointer(rebasing: middle[0..<length])
            let atEnd = UnsafeRawBufferPointer(rebasing: middle[(page - length)..<page])
            for bytes in [atStart, atEnd] {
                let expected = zlibCRC(0x1234_5678, bytes)
                for width in widths where fold(0x1234_5678, bytes, maxWidth: width) != expected {
                    failures.append(length)
                }
            }
        }
        #expect(failures.isEmpty, "mismatched lengths: \(failures.prefix(10))")
    }
    #endif
}
