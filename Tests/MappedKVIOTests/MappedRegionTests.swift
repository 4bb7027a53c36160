// Proves MappedRegion's life cycle against a real file: a mapping survives the file growing (through
// FileDescriptor.allocate or truncate) and a remap, keeping every byte written through the old mapping
// and showing the growth as zeros; empty regions, synchronize and unmap behave; failures are reported
// and a failed remap keeps the old mapping. The second suite shrinks the file under a live mapping from
// another descriptor and never touches bytes past the new end (that would raise SIGBUS).

import Glibc
import MappedKVIO
import Testing

/// The bytes `range` of `region`. The region is a parameter, so it is alive for the whole copy.
private func contents(_ region: MappedRegion, _ range: Range<Int>) -> [UInt8] {
    Array(region.bytes[range])
}

/// Copies `bytes` into `region` at `offset`.
private func store(_ bytes: [UInt8], in region: MappedRegion, at offset: Int) {
    UnsafeMutableRawBufferPointer(rebasing: region.bytes[offset..<offset + bytes.count]).copyBytes(from: bytes)
}

/// Opens `path` read-write and sizes it to `size` bytes.
private func openSized(_ path: String, _ size: Int) throws -> FileDescriptor {
    let file = try FileDescriptor.open(path, access: .readWriteCreate)
    try file.truncate(to: size)
    return file
}

private let page = PageSize.current

@Suite("MappedRegion: growth, remap and life cycle")
struct MappedRegionTests {
    enum Growth: String, CaseIterable, Sendable {
        case allocate
        case truncate
    }

    @Test(
        "bytes written through the old mapping are in the remapped region; growth reads as zeros",
        arguments: Growth.allCases)
    func growAndRemap(growth: Growth) throws {
        try TemporaryDirectory.with { directory in
            let file = try openSized(directory.file("grow"), page)
            defer { file.close() }
            let region = try MappedRegion(file: file, length: page, writable: true)
            defer { region.unmap() }
            let written = pattern(page)
            store(written, in: region, at: 0)

            let grown = 3 * page + 100
            switch growth {
            case .allocate: try file.allocate(upTo: grown)
            case .truncate: try file.truncate(to: grown)
            }
            #expect(try file.size() == grown)
            try region.remap(file: file, length: grown)
            try #require(region.length == grown)
            #expect(region.isWritable)
            #expect(contents(region, 0..<page) == written)
            #expect(contents(region, page..<grown).allSatisfy { $0 == 0 })

            // The new tail is writable through the mapping and shared with the file.
            store([0xAB, 0xCD], in: region, at: grown - 2)
            #expect(try file.read(count: 4, at: grown - 4) == [0, 0, 0xAB, 0xCD])
        }
    }

    @Test("allocate never shrinks a file, and an existing mapping of it stays intact")
    func allocateSmallerIsNoOp() throws {
        try TemporaryDirectory.with { directory in
            let file = try openSized(directory.file("f"), 2 * page)
            defer { file.close() }
            let region = try MappedRegion(file: file, length: 2 * page, writable: true)
            defer { region.unmap() }
            store(pattern(2 * page), in: region, at: 0)
            try file.allocate(upTo: page)
            try file.allocate(upTo: 2 * page)
            #expect(try file.size() == 2 * page)
            #expect(contents(region, 0..<2 * page) == pattern(2 * page))
        }
    }

    @Test("two regions of one file, one read-only, see each other's writes (MAP_SHARED)")
    func regionsShareThePageCache() throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("shared")
            let file = try openSized(path, page)
            defer { file.close() }
            let reader = try FileDescriptor.open(path, access: .readOnly)
            defer { reader.close() }
            let writable = try MappedRegion(file: file, length: page, writable: true)
            defer { writable.unmap() }
            let readOnly = try MappedRegion(file: reader, length: page, writable: false)
            defer { readOnly.unmap() }
            #expect(!readOnly.isWritable)
            #expect(readOnly.path == path)
            store(pattern(64, seed: 3), in: writable, at: 1000)
            #expect(contents(readOnly, 1000..<1064) == pattern(64, seed: 3))
            #expect(contents(readOnly, 0..<1000).allSatisfy { $0 == 0 })
        }
    }

    @Test("a region of length 0 is empty, synchronizes and unmaps as a no-op, and can be remapped")
    func emptyRegion() throws {
        try TemporaryDirectory.with { directory in
            let file = try FileDescriptor.open(directory.file("empty"), access: .readWriteCreate)
            defer { file.close() }
            let region = try MappedRegion(file: file, length: 0, writable: true)
            defer { region.unmap() }
            #expect(region.length == 0)
            #expect(region.bytes.isEmpty)
            #expect(region.bytes.baseAddress == nil)
            try region.synchronize()
            region.unmap()
            #expect(region.length == 0)

            try file.allocate(upTo: page)
            try region.remap(file: file, length: page)
            try #require(region.length == page)
            #expect(region.bytes.baseAddress != nil)
            #expect(contents(region, 0..<page).allSatisfy { $0 == 0 })
            try region.remap(file: file, length: 0)
            #expect(region.length == 0)
            #expect(region.bytes.baseAddress == nil)
        }
    }

    @Test("synchronize writes the mapping back; a fresh descriptor reads the bytes")
    func synchronize() throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("sync")
            let file = try openSized(path, 2 * page)
            defer { file.close() }
            let region = try MappedRegion(file: file, length: 2 * page, writable: true)
            defer { region.unmap() }
            store(pattern(2 * page, seed: 9), in: region, at: 0)
            try region.synchronize()
            let fresh = try FileDescriptor.open(path, access: .readOnly)
            defer { fresh.close() }
            #expect(try fresh.read(count: 2 * page, at: 0) == pattern(2 * page, seed: 9))

            let readOnly = try MappedRegion(file: fresh, length: 2 * page, writable: false)
            defer { readOnly.unmap() }
            try readOnly.synchronize()
        }
    }

    @Test("unmap makes the region empty, twice is harmless, and a later remap maps the file again")
    func unmapEmpties() throws {
        try TemporaryDirectory.with { directory in
            let file = try openSized(directory.file("unmap"), page)
            defer { file.close() }
            let region = try MappedRegion(file: file, length: page, writable: true)
            defer { region.unmap() }
            store(pattern(page), in: region, at: 0)
            region.unmap()
            #expect(region.length == 0)
            #expect(region.bytes.baseAddress == nil)
            region.unmap()
            try region.synchronize()
            #expect(region.length == 0)
            // The bytes were in the file all along.
            #expect(try file.read(count: page, at: 0) == pattern(page))
            try region.remap(file: file, length: page)
            #expect(contents(region, 0..<page) == pattern(page))
        }
    }

    @Test("a mapping outlives the descriptor it was made from")
    func mappingOutlivesDescriptor() throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("closed")
            let file = try openSized(path, page)
            let region = try MappedRegion(file: file, length: page, writable: true)
            defer { region.unmap() }
            file.close()
            store(pattern(16), in: region, at: 100)
            let reader = try FileDescriptor.open(path, access: .readOnly)
            defer { reader.close() }
            #expect(try reader.read(count: 16, at: 100) == pattern(16))
        }
    }

    @Test("a writable mapping of a read-only descriptor fails with EACCES, naming mmap and the path")
    func mapFailure() throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("ro")
            try makeFile(path, pattern(page))
            let reader = try FileDescriptor.open(path, access: .readOnly)
            defer { reader.close() }
            #expect(throws: SystemError("mmap", path: path, errno: EACCES)) {
                _ = try MappedRegion(file: reader, length: page, writable: true)
            }
        }
    }

    @Test("a failed remap throws and leaves the old mapping in place and usable")
    func failedRemapKeepsMapping() throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("keep")
            let file = try openSized(path, page)
            defer { file.close() }
            let reader = try FileDescriptor.open(path, access: .readOnly)
            defer { reader.close() }
            let region = try MappedRegion(file: file, length: page, writable: true)
            defer { region.unmap() }
            store(pattern(32), in: region, at: 0)
            #expect(throws: SystemError("mmap", path: path, errno: EACCES)) {
                try region.remap(file: reader, length: page)
            }
            try #require(region.length == page)
            #expect(contents(region, 0..<32) == pattern(32))
            store([7], in: region, at: page - 1)
            #expect(try file.read(count: 1, at: page - 1) == [7])
        }
    }
}

@Suite("MappedRegion: the file shrinks under the mapping")
struct ShrinkingFileTests {
    /// A file of three pages holding `pattern(3 * page)`, mapped whole and writable.
    private func mappedFile(_ path: String) throws -> (FileDescriptor, MappedRegion) {
        let file = try openSized(path, 3 * page)
        let region = try MappedRegion(file: file, length: 3 * page, writable: true)
        store(pattern(3 * page), in: region, at: 0)
        return (file, region)
    }

    /// Truncates `path` to `size` through a descriptor of its own, as another process would.
    private func truncateElsewhere(_ path: String, to size: Int) throws {
        let other = try FileDescriptor.open(path, access: .readWriteCreate)
        defer { other.close() }
        try other.truncate(to: size)
    }

    @Test(
        "size() reports the new size and a remap to it shows the remaining bytes",
        arguments: [1, 100, page - 1, page, page + 100, 2 * page + 1])
    func shrinkAndRemap(newSize: Int) throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("shrink")
            let (file, region) = try mappedFile(path)
            defer {
                region.unmap()
                file.close()
            }
            try truncateElsewhere(path, to: newSize)
            #expect(try file.size() == newSize)
            #expect(try file.read(count: 3 * page, at: 0) == Array(pattern(3 * page)[0..<newSize]))
            // Only bytes before the new end are touched through the old mapping.
            #expect(contents(region, 0..<newSize) == Array(pattern(3 * page)[0..<newSize]))

            try region.remap(file: file, length: newSize)
            try #require(region.length == newSize)
            #expect(contents(region, 0..<newSize) == Array(pattern(3 * page)[0..<newSize]))
            // Writes through the new mapping reach the file.
            store([0], in: region, at: newSize - 1)
            #expect(try file.read(count: 1, at: newSize - 1) == [0])
        }
    }

    @Test("a file truncated to nothing remaps to an empty region")
    func shrinkToZero() throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("zero")
            let (file, region) = try mappedFile(path)
            defer {
                region.unmap()
                file.close()
            }
            try truncateElsewhere(path, to: 0)
            #expect(try file.size() == 0)
            #expect(try file.read(count: 10, at: 0) == [])
            try region.remap(file: file, length: try file.size())
            #expect(region.length == 0)
            #expect(region.bytes.baseAddress == nil)
        }
    }

    @Test("bytes cut off by a shrink are gone: growing the file again shows zeros there")
    func shrinkThenRegrow() throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("regrow")
            let (file, region) = try mappedFile(path)
            defer {
                region.unmap()
                file.close()
            }
            try truncateElsewhere(path, to: page + 10)
            try truncateElsewhere(path, to: 3 * page)
            #expect(try file.size() == 3 * page)
            try region.remap(file: file, length: 3 * page)
            #expect(contents(region, 0..<page + 10) == Array(pattern(3 * page)[0..<page + 10]))
            #expect(contents(region, page + 10..<3 * page).allSatisfy { $0 == 0 })
        }
    }
}
