import Glibc
import MappedKVCrypto
import MappedKVFormat
import MappedKVIO

/// The two open, mapped files of a store.
///
/// Every write to either file and every read of the meta struct goes through this type, so the
/// multi-process layer has one place to lock, check and remap.
final class StoreFiles {
    let location: StoreLocation
    let isReadOnly: Bool
    private var dataFile: FileDescriptor
    private var metaFile: FileDescriptor
    private let data: MappedRegion
    private let meta: MappedRegion
    private var isOpen = true

    /// Whether the files were created by this open.
    let createdData: Bool
    let createdMeta: Bool

    private init(location: StoreLocation, isReadOnly: Bool, dataFile: FileDescriptor, metaFile: FileDescriptor,
                 data: MappedRegion, meta: MappedRegion, createdData: Bool, createdMeta: Bool) {
        self.location = location
        self.isReadOnly = isReadOnly
        self.dataFile = dataFile
        self.metaFile = metaFile
        self.data = data
        self.meta = meta
        self.createdData = createdData
        self.createdMeta = createdMeta
    }

    deinit { close() }

    /// Opens both files and maps them at their current sizes; nothing existing is changed.
    ///
    /// A read-write open creates missing files (mode 0600) and directories; a read-only open
    /// requires both files to exist.
    static func open(_ location: StoreLocation, readOnly: Bool) throws(MappedKVError) -> StoreFiles {
        let dataExists = Directory.fileExists(location.dataPath)
        let metaExists = Directory.fileExists(location.metaPath)
        if readOnly {
            guard dataExists, metaExists else { throw .storeNotFound(location.dataPath) }
        } else if !dataExists || !metaExists {
            try refuseToRecreateHalf(location, dataExists: dataExists, metaExists: metaExists)
            do { try Directory.create(location.fileDirectory) } catch { throw .system(error) }
        }
        let access: FileDescriptor.Access = readOnly ? .readOnly : .readWriteCreate
        let dataFile: FileDescriptor, metaFile: FileDescriptor
        do { dataFile = try FileDescriptor.open(location.dataPath, access: access) } catch { throw .system(error) }
        do { metaFile = try FileDescriptor.open(location.metaPath, access: access) } catch {
            dataFile.close()
            throw .system(error)
        }
        do {
            let data = try MappedRegion(file: dataFile, length: try dataFile.size(), writable: !readOnly)
            let meta = try MappedRegion(file: metaFile, length: try metaFile.size(), writable: !readOnly)
            return StoreFiles(location: location, isReadOnly: readOnly, dataFile: dataFile, metaFile: metaFile,
                              data: data, meta: meta, createdData: !dataExists, createdMeta: !metaExists)
        } catch {
            dataFile.close()
            metaFile.close()
            throw .system(error)
        }
    }

    /// Refuses to create one file of a pair when the other holds data: a fresh file beside it
    /// would make that data unreachable, and the next write-back would destroy it.
    private static func refuseToRecreateHalf(
        _ location: StoreLocation, dataExists: Bool, metaExists: Bool
    ) throws(MappedKVError) {
        if dataExists && !metaExists {
            let data: [UInt8]
            do {
                let file = try FileDescriptor.open(location.dataPath, access: .readOnly)
                defer { file.close() }
                data = try file.read(count: try file.size(), at: 0)
            } catch { throw .system(error) }
            // An all-zero data file holds nothing: creating its meta is safe.
            if data.contains(where: { $0 != 0 }) { throw .corrupted(location.id, .metaFileMissing) }
        }
        if metaExists && !dataExists {
            let bytes: [UInt8]
            do {
                let file = try FileDescriptor.open(location.metaPath, access: .readOnly)
                defer { file.close() }
                bytes = try file.read(count: MetaInfo.size, at: 0)
            } catch { throw .system(error) }
            if bytes.count >= MetaInfo.size, let meta = try? MetaInfo(parsing: bytes),
               meta.normalized.holdsActualSize, meta.actualSize > 0 {
                throw .corrupted(location.id, .dataFileMissing)
            }
        }
    }

    /// Unmaps and closes both files.
    func close() {
        guard isOpen else { return }
        isOpen = false
        data.unmap()
        meta.unmap()
        dataFile.close()
        metaFile.close()
    }

    // MARK: Reading

    /// The data file's mapped size.
    var dataFileSize: Int { data.length }
    /// The meta file's mapped size.
    var metaFileSize: Int { meta.length }

    /// The whole mapped data file, header included.
    var dataFileBytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(data.bytes) }

    /// The meta struct as stored; an empty meta file reads as the all-zero meta.
    func readMeta() throws(MappedKVError) -> MetaInfo {
        if meta.length == 0 { return MetaInfo() }
        do {
            return try MetaInfo(parsing: UnsafeRawBufferPointer(meta.bytes))
        } catch {
            throw .corrupted(location.id, .metaUnreadable(error.description))
        }
    }

    // MARK: Writing

    /// Grows each file to a whole number of pages, at least `minimumDataSize` and one page.
    /// Only bytes past the current end are added; nothing existing is overwritten.
    func ensureSizes(minimumDataSize: Int, pageSize: Int) throws(MappedKVError) {
        precondition(!isReadOnly)
        let dataTarget = max(minimumDataSize, PageSize.roundUp(data.length, pageSize: pageSize))
        if data.length < dataTarget || data.length % pageSize != 0 {
            try resizeData(to: PageSize.roundUp(dataTarget, pageSize: pageSize))
        }
        if meta.length < pageSize || meta.length % pageSize != 0 {
            let target = PageSize.roundUp(max(meta.length, pageSize), pageSize: pageSize)
            do {
                try metaFile.allocate(upTo: target)
                try meta.remap(file: metaFile, length: target)
            } catch { throw .system(error) }
        }
    }

    /// Sets the data file's size and remaps it. Growth reserves disk blocks; bytes past the old end read as zeros.
    func resizeData(to size: Int) throws(MappedKVError) {
        precondition(!isReadOnly)
        do {
            if size > data.length {
                try dataFile.allocate(upTo: size)
            } else {
                try dataFile.truncate(to: size)
            }
            try data.remap(file: dataFile, length: size)
        } catch { throw .system(error) }
    }

    /// Copies `bytes` into the data region at `offset` (file offset `4 + offset`), encrypting them in
    /// place by continuing `cipher` if one is given, and returns the stored bytes (for the CRC).
    @discardableResult
    func writeRegion(_ bytes: UnsafeRawBufferPointer, at offset: Int, encryptingWith cipher: CFBStream? = nil) -> UnsafeRawBufferPointer {
        precondition(!isReadOnly && 4 + offset + bytes.count <= data.length, "write past the mapped data file")
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        let destination = UnsafeMutableRawBufferPointer(start: data.bytes.baseAddress! + 4 + offset, count: bytes.count)
        destination.baseAddress!.copyMemory(from: source, byteCount: bytes.count)
        cipher?.encrypt(destination)
        return UnsafeRawBufferPointer(destination)
    }

    /// Fills the data region's `range` with zeros, clipped to the mapping.
    func zeroRegion(_ range: Range<Int>) {
        precondition(!isReadOnly)
        let end = min(4 + range.upperBound, data.length)
        let start = 4 + range.lowerBound
        guard start < end else { return }
        (data.bytes.baseAddress! + start).initializeMemory(as: UInt8.self, repeating: 0, count: end - start)
    }

    /// Stores `info` in the meta file: all 112 bytes, or only the CRC and size fields.
    func writeMeta(_ info: MetaInfo, _ write: MetaInfo.UpdateWrite) {
        precondition(!isReadOnly && meta.length >= MetaInfo.size, "meta file not sized for writing")
        switch write {
        case .wholeStruct:
            info.write(to: meta.bytes)
        case .crcAndSizeOnly:
            meta.bytes.storeBytes(of: info.crcDigest.littleEndian, toByteOffset: MetaInfo.Offset.crcDigest, as: UInt32.self)
            meta.bytes.storeBytes(of: info.actualSize.littleEndian, toByteOffset: MetaInfo.Offset.actualSize, as: UInt32.self)
        }
    }

    /// Flushes the data file's mapping to disk.
    func synchronizeData() throws(MappedKVError) {
        do { try data.synchronize() } catch { throw .system(error) }
    }

    /// Flushes the meta file's mapping to disk.
    func synchronizeMeta() throws(MappedKVError) {
        do { try meta.synchronize() } catch { throw .system(error) }
    }
}
