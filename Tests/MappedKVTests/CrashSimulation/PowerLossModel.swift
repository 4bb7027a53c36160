import Foundation

@testable import MappedKV

/// What a disk may hold after a power loss during a recorded workload, under the durability
/// contract's assumptions (docs/FORMAT.md 7.3d): 512-byte sectors are written whole, and a flush
/// (`msync`, `fdatasync`, a directory's `fsync`) returns only once what it covers is on disk.
///
/// Between two flushes of a file the kernel may write any of its dirty sectors back at any
/// moment, so after a crash each sector holds the version it had at some moment since the
/// file's last flush: the flushed one, the last one, or any in between, independently of the
/// other sectors. A file's size is likewise that of some moment since its last flush. A name
/// created or removed since the directory's last flush may or may not be there; the journal,
/// the one file a store creates and removes, is modelled that way, and so are the data and meta
/// files until the directory is first flushed after their creation.
struct PowerLossModel {
    /// The files after each write: `images[i]` after the first `i` writes.
    let images: [FileImage]
    /// For each write count, how many writes each file had seen at its last flush.
    private let dataFlushed: [Int]
    private let metaFlushed: [Int]
    private let journalFlushed: [Int]
    private let directoryFlushed: [Int]
    /// Whether the data and meta files were created by the recording (and so may be missing).
    private let createdByRecording: Bool
    /// For the files of a layer on top: the write counts after each flush of a folder, and of a file.
    private let folderFlushes: [String: [Int]]
    private let fileFlushes: [String: [Int]]

    /// The number of crash points: after 0 writes up to after every write.
    var crashPoints: Int { images.count }

    init(writes: [FileWrite], createdByRecording: Bool = true) {
        var image = FileImage()
        var images = [image]
        var data = [0]
        var meta = [0]
        var journal = [0]
        var directory = [0]
        var folders: [String: [Int]] = [:]
        var others: [String: [Int]] = [:]
        for (index, write) in writes.enumerated() {
            if case .syncFolder(let folder) = write { folders[folder, default: []].append(index + 1) }
            if case .syncFile(let name) = write { others[name, default: []].append(index + 1) }
            image.apply(write)
            images.append(image)
            let count = index + 1
            data.append(write == .sync(.data) ? count : data[index])
            meta.append(write == .sync(.meta) ? count : meta[index])
            journal.append(write == .sync(.journal) ? count : journal[index])
            directory.append(write == .sync(.directory) ? count : directory[index])
        }
        self.images = images
        self.dataFlushed = data
        self.metaFlushed = meta
        self.journalFlushed = journal
        self.directoryFlushed = directory
        self.createdByRecording = createdByRecording
        self.folderFlushes = folders
        self.fileFlushes = others
    }

    /// The write count at the last flush in `flushes` made by `count` writes, 0 if none.
    private static func last(_ flushes: [Int]?, atOrBefore count: Int) -> Int {
        flushes?.last { $0 <= count } ?? 0
    }

    /// The other files after a crash right after `count` writes: each name since its folder's
    /// last flush there or not, each file's bytes any version since its own last flush (a file
    /// not yet flushed may be empty).
    private func otherFiles(after count: Int, _ random: inout SplitMix64) -> [String: [UInt8]] {
        var result: [String: [UInt8]] = [:]
        var names: [String: Int] = [:]  // name -> its folder's last flush
        var folderFlushed: [String: Int] = [:]
        for index in 0...count {
            for name in images[index].others.keys where names[name] == nil {
                let folder = String(name.prefix { $0 != "/" })
                let flushed =
                    folderFlushed[folder]
                    ?? {
                        let value = Self.last(folderFlushes[folder], atOrBefore: count)
                        folderFlushed[folder] = value
                        return value
                    }()
                if index >= flushed || images[flushed].others[name] != nil { names[name] = flushed }
            }
        }
        for (name, flushed) in names.sorted(by: { $0.key < $1.key }) {
            let present = images[flushed...count].map { $0.others[name] != nil }
            guard present[Int(random.next() % UInt64(present.count))] else { continue }
            let since = Self.last(fileFlushes[name], atOrBefore: count)
            result[name] = Self.mix(images[since...count].map { $0.others[name] ?? [] }, &random)
        }
        return result
    }

    /// One disk state a power loss right after `count` writes may leave, drawn with `random`.
    func crashState(after count: Int, _ random: inout SplitMix64) -> FileImage {
        var state = FileImage()
        state.data = Self.mix(images[dataFlushed[count]...count].map(\.data), &random)
        state.meta = Self.mix(images[metaFlushed[count]...count].map(\.meta), &random)
        // The journal's name: any version since the directory's last flush.
        let names = images[directoryFlushed[count]...count].map { $0.journal != nil }
        let exists = names[Int(random.next() % UInt64(names.count))]
        if exists {
            // Its bytes: a file created since its last flush starts out empty on disk.
            let since = max(journalFlushed[count], directoryFlushed[count])
            let versions = images[since...count].map { $0.journal ?? [] }
            let mixed = Self.mix(versions, &random)
            state.journal = mixed
        }
        state.others = otherFiles(after: count, &random)
        if createdByRecording && directoryFlushed[count] == 0 {
            if random.next() % 4 == 0 { state.dataMissing = true }
            if random.next() % 4 == 0 { state.metaMissing = true }
        }
        return state
    }

    /// A file whose size is one of `versions`' and each of whose sectors is that sector of one of
    /// `versions` (zeros where that version is shorter): the last version most often, the first
    /// (the flushed one) often, any other sometimes.
    static func mix(_ versions: [[UInt8]], _ random: inout SplitMix64) -> [UInt8] {
        let last = versions.count - 1
        func pick() -> Int {
            switch random.next() % 8 {
            case 0..<4: last
            case 4, 5: 0
            default: Int(random.next() % UInt64(versions.count))
            }
        }
        let size = versions[pick()].count
        var result = [UInt8](repeating: 0, count: size)
        let sector = 512
        var start = 0
        while start < size {
            let end = min(start + sector, size)
            let source = versions[pick()]
            if start < source.count {
                let available = min(end, source.count)
                result.replaceSubrange(start..<available, with: source[start..<available])
            }
            start = end
        }
        return result
    }
}
