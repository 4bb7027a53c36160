import Glibc
import MappedKVCrypto
import MappedKVFormat

/// Writes the seed corpus (`tools/fuzz/corpus-seed/`) from the test vectors: each MMKV-written
/// store of `Vectors/mmkv-2.4.2/` in every layout and several open modes, a few damaged variants,
/// and the worked example of docs/FORMAT.md 2.11 (`Vectors/format/worked-example-2.11.hex`),
/// also with write-back journals that are due a redo or to be ignored.
///
/// Run by tools/fuzz.sh as `mappedkv-fuzz --make-seeds Vectors tools/fuzz/corpus-seed`.
/// The output is deterministic: file names say what each seed is.
struct SeedMaker {
    let vectors: String
    let output: String

    /// The MMKV stores and their keys (Vectors/mmkv-2.4.2/README.md).
    static let stores: [(directory: String, id: String, key: FuzzFlags.KeyChoice)] = [
        ("a_plain", "case_a", .none),
        ("b_crypt", "case_b", .vectorKey14),
        ("b16_crypt16", "case_b16", .vectorKey16),
        ("c_overwrites", "case_c", .none),
    ]

    func run() -> CInt {
        PlainFiles.makeDirectory(output)
        var count = 0
        func emit(_ name: String, _ image: StoreImage) {
            PlainFiles.write(image.encoded(), to: output + "/" + name)
            count += 1
        }
        for store in Self.stores {
            let root = vectors + "/mmkv-2.4.2/" + store.directory + "/root/" + store.id
            guard let data = PlainFiles.read(root), let metaFile = PlainFiles.read(root + ".crc"),
                metaFile.count >= MetaInfo.size
            else {
                printToStandardError("missing or short vector files at \(root)")
                return 1
            }
            seeds(
                name: store.directory, data: data, meta: Array(metaFile[..<MetaInfo.size]), key: store.key, emit: emit)
        }
        guard let example = workedExample() else {
            printToStandardError("cannot read \(vectors)/format/worked-example-2.11.hex")
            return 1
        }
        exampleSeeds(region: example, emit: emit)
        emit("empty-split-rw-recover", StoreImage(flags: flags(.none, .split), metaFile: [], dataFile: []))
        print("wrote \(count) seeds to \(output)")
        return 0
    }

    private func flags(
        _ key: FuzzFlags.KeyChoice, _ layout: FuzzFlags.Layout, readOnly: Bool = false,
        decision: FuzzFlags.DecisionMode = .recover, multiProcess: Bool = false
    ) -> FuzzFlags {
        FuzzFlags(key: key, isReadOnly: readOnly, decision: decision, layout: layout, isMultiProcess: multiProcess)
    }

    /// The seeds of one MMKV-written store.
    private func seeds(
        name: String, data: [UInt8], meta: [UInt8], key: FuzzFlags.KeyChoice, emit: (String, StoreImage) -> Void
    ) {
        let trimmed = Self.trimmingZeros(data)
        // As MMKV left it, in several open modes.
        let modes: [(String, Bool, FuzzFlags.DecisionMode, Bool)] = [
            ("rw-recover", false, .recover, false), ("ro-recover", true, .recover, false),
            ("rw-discard", false, .discard, false), ("rw-fail", false, .fail, false),
            ("rw-default", false, .libraryDefault, false), ("mp-rw-recover", false, .recover, true),
        ]
        for (mode, readOnly, decision, multiProcess) in modes {
            let seedFlags = flags(key, .raw, readOnly: readOnly, decision: decision, multiProcess: multiProcess)
            emit("\(name)-raw-\(mode)", StoreImage(flags: seedFlags, metaFile: meta, dataFile: trimmed))
        }
        emit("\(name)-split-rw-recover", StoreImage(flags: flags(key, .split), metaFile: meta, dataFile: trimmed))

        // Plain text for the sealing layouts, which encrypt it again.
        let size = Int(RegionSealer.load(meta, at: MetaInfo.Offset.actualSize))
        var region = Array(data[4..<min(data.count, 4 + size)])
        if let cryptKey = key.cryptKey {
            let iv = Array(meta[MetaInfo.Offset.iv..<(MetaInfo.Offset.iv + 16)])
            do { try CFBStream(key: cryptKey.aesKey, iv: iv).decrypt(&region) } catch {
                harnessFailure("decrypting \(name): \(error)")
            }
        }
        let plain = Array(data[..<4]) + region
        emit("\(name)-sealed-rw-recover", StoreImage(flags: flags(key, .sealed), metaFile: meta, dataFile: plain))
        emit("\(name)-torn-rw-recover", StoreImage(flags: flags(key, .torn), metaFile: meta, dataFile: plain))

        damageSeeds(name: name, trimmed: trimmed, meta: meta, plain: plain, key: key, emit: emit)
    }

    /// Damaged variants of one MMKV-written store, one for each way a load meets damage or repairs
    /// it; `trimmed` is the data file, `plain` the same with its region decrypted.
    private func damageSeeds(
        name: String, trimmed: [UInt8], meta: [UInt8], plain: [UInt8], key: FuzzFlags.KeyChoice,
        emit: (String, StoreImage) -> Void
    ) {
        let size = Int(RegionSealer.load(meta, at: MetaInfo.Offset.actualSize))
        guard size > 8 else { return }
        func raw(
            _ suffix: String, meta: [UInt8] = meta, data: [UInt8] = trimmed, decision: FuzzFlags.DecisionMode = .recover
        ) {
            emit(
                "\(name)-raw-\(suffix)",
                StoreImage(flags: flags(key, .raw, decision: decision), metaFile: meta, dataFile: data))
        }
        // A flipped byte in the last record (CRC mismatch), kept to the last confirmed size,
        // refused by the handler, and with no last confirmed size (nothing verifiable).
        var flipped = trimmed
        flipped[4 + size - 2] ^= 0x40
        raw("rw-recover-crc-damage", data: flipped)
        raw("rw-fail-crc-damage", data: flipped, decision: .fail)
        var unconfirmed = meta
        RegionSealer.store(0, in: &unconfirmed, at: MetaInfo.Offset.lastConfirmedActualSize)
        raw("rw-recover-crc-damage-unconfirmed", meta: unconfirmed, data: flipped)
        // A used size past the file.
        var tooLong = meta
        RegionSealer.store(UInt32(StoreImage.pageSize + 100), in: &tooLong, at: MetaInfo.Offset.actualSize)
        raw("rw-recover-length-damage", meta: tooLong)
        // The header holds the size the CRC covers, the meta another (MMKV's downgrade and upgrade).
        var headerSized = trimmed
        var shortSize = meta
        RegionSealer.store(UInt32(size), in: &headerSized, at: 0)
        RegionSealer.store(UInt32(size - 1), in: &shortSize, at: MetaInfo.Offset.actualSize)
        raw("rw-recover-header-size", meta: shortSize, data: headerSized)
        // A zeroed meta over data (a lost meta file), a meta file cut short of the struct, and
        // bytes past the struct in the meta file.
        raw("rw-recover-blank-meta", meta: [UInt8](repeating: 0, count: MetaInfo.size))
        emit(
            "\(name)-split-rw-recover-short-meta",
            StoreImage(flags: flags(key, .split), metaFile: Array(meta.prefix(60)), dataFile: trimmed))
        emit(
            "\(name)-raw-rw-recover-meta-tail",
            StoreImage(
                flags: flags(key, .raw), metaFile: meta, dataFile: trimmed, metaTail: (0..<400).map { UInt8($0 % 251) })
        )
        // The other key (or none): records that do not decode, which point at the key; also
        // refused by the handler.
        let otherKey: FuzzFlags.KeyChoice = key == .none ? .vectorKey16 : .none
        for (suffix, decision) in [
            ("rw-recover-wrong-key", FuzzFlags.DecisionMode.recover), ("rw-fail-wrong-key", .fail),
        ] {
            emit(
                "\(name)-raw-\(suffix)",
                StoreImage(flags: flags(otherKey, .raw, decision: decision), metaFile: meta, dataFile: trimmed))
        }
        // A sealed region whose last record does not decode: the decodable prefix is kept.
        emit(
            "\(name)-sealed-rw-recover-undecodable-tail",
            StoreImage(flags: flags(key, .sealed), metaFile: meta, dataFile: plain + [0x05, 0x6b, 0x65, 0x79, 0xFF]))
    }

    /// The seeds of the worked example: sealed plain and encrypted, and an append cut between its
    /// CRC and its size (the used size ends before the last record).
    private func exampleSeeds(region: [UInt8], emit: (String, StoreImage) -> Void) {
        var meta = [UInt8](repeating: 0, count: MetaInfo.size)
        RegionSealer.store(MetaVersion.flag.rawValue, in: &meta, at: MetaInfo.Offset.version)
        RegionSealer.store(1, in: &meta, at: MetaInfo.Offset.sequence)
        RegionSealer.store(4, in: &meta, at: MetaInfo.Offset.lastConfirmedActualSize)
        let data = [0, 0, 0, 0] + region
        emit("example-sealed-rw-recover", StoreImage(flags: flags(.none, .sealed), metaFile: meta, dataFile: data))
        emit(
            "example-sealed-key14-rw-recover",
            StoreImage(flags: flags(.vectorKey14, .sealed), metaFile: meta, dataFile: data))
        emit(
            "example-sealed-aes256-ro-recover",
            StoreImage(flags: flags(.vectorKey14AES256, .sealed, readOnly: true), metaFile: meta, dataFile: data))
        var torn = meta
        RegionSealer.store(UInt32(region.count - 3), in: &torn, at: MetaInfo.Offset.actualSize)  // before "01 62 00"
        emit("example-torn-rw-recover", StoreImage(flags: flags(.none, .torn), metaFile: torn, dataFile: data))
        emit(
            "example-torn-key16-rw-fail",
            StoreImage(flags: flags(.vectorKey16, .torn, decision: .fail), metaFile: torn, dataFile: data))
        journalSeeds(meta: meta, data: data, emit: emit)
    }

    /// The worked example with a write-back journal whose new region drops its last record: due a
    /// redo (a writer killed after storing the marker sequence, or within the final meta's store),
    /// to be ignored (the sequence is not the marker, or the journal is torn), read-only and encrypted.
    private func journalSeeds(meta: [UInt8], data: [UInt8], emit: (String, StoreImage) -> Void) {
        var newMeta = meta
        RegionSealer.store(2, in: &newMeta, at: MetaInfo.Offset.sequence)
        let newRegion = Array(data[4..<(data.count - 3)])
        func section(
            _ mode: JournalSection.Mode, base: MetaStamp = MetaStamp(sequence: 5, crcDigest: 0, actualSize: 0)
        )
            -> JournalSection
        {
            JournalSection(mode: mode, base: base, fileSize: 0, meta: newMeta, region: newRegion)
        }
        let cases: [(String, FuzzFlags, JournalSection)] = [
            ("redo-rw-recover", flags(.none, .sealed), section(.linked)),
            ("redo-ro-recover", flags(.none, .sealed, readOnly: true), section(.linked)),
            ("redo-key14-mp-rw-recover", flags(.vectorKey14, .sealed, multiProcess: true), section(.linked)),
            ("redo-new-crc-rw-recover", flags(.none, .sealed), section([.linked, .storesNewCRC])),
            ("redo-new-meta-rw-recover", flags(.none, .sealed), section([.linked, .storesNewCRC, .storesNewSize])),
            ("ignore-stale-rw-recover", flags(.none, .sealed), section([])),
            ("ignore-stale-ro-recover", flags(.none, .sealed, readOnly: true), section([])),
        ]
        for (name, seedFlags, journal) in cases {
            emit(
                "example-journal-\(name)",
                StoreImage(flags: seedFlags, metaFile: meta, dataFile: data, journal: journal))
        }
        // A write-back that completed and was appended to since (the old region's last record again):
        // the stored struct is the journal's new meta but for the CRC and size.
        let finished = section([], base: MetaStamp(sequence: 1, crcDigest: 0, actualSize: 0))
        var noMeta: [UInt8]? = nil
        guard let written = WriteBackJournal(parsing: finished.journalFile(linking: &noMeta, key: nil)) else {
            harnessFailure("a sealed journal does not parse")
        }
        emit(
            "example-journal-ignore-completed-rw-recover",
            StoreImage(
                flags: flags(.none, .sealed), metaFile: written.meta.serialized, dataFile: data, journal: finished))
        // A journal cut short by a byte, which would be due a redo if it were whole: the stored
        // sequence is its marker, and the stored CRC and size its base's.
        var sealedMeta = meta
        var sealedData = data
        RegionSealer(key: nil, setsUsedSize: true).seal(meta: &sealedMeta, data: &sealedData)
        let base = MetaStamp(
            sequence: RegionSealer.load(meta, at: MetaInfo.Offset.sequence) &- 1,
            crcDigest: RegionSealer.load(sealedMeta, at: MetaInfo.Offset.crcDigest),
            actualSize: RegionSealer.load(sealedMeta, at: MetaInfo.Offset.actualSize))
        guard let newInfo = try? MetaInfo(parsing: newMeta) else { harnessFailure("a 112-byte meta does not parse") }
        let whole = WriteBackJournal(base: base, fileSize: 4096, meta: newInfo, region: newRegion).serialized
        let torn = JournalSection(
            decoding: ([JournalSection.Mode.asGiven.rawValue] + whole.dropFirst(JournalSection.magic.count).dropLast(1))[
                ...])
        emit(
            "example-journal-torn-rw-recover",
            StoreImage(flags: flags(.none, .sealed), metaFile: meta, dataFile: data, journal: torn))
    }

    /// The region bytes of the worked example, from its hex file ('#' comments, any whitespace).
    private func workedExample() -> [UInt8]? {
        guard let text = PlainFiles.read(vectors + "/format/worked-example-2.11.hex") else { return nil }
        var digits: [UInt8] = []
        for line in String(decoding: text, as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
            for character in line.utf8 {
                switch character {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digits.append(character - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digits.append(character - UInt8(ascii: "a") + 10)
                case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"): continue
                default: return nil
                }
            }
        }
        guard digits.count % 2 == 0, !digits.isEmpty else { return nil }
        return stride(from: 0, to: digits.count, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
    }

    /// `bytes` without trailing zeros, but at least the 4-byte header (the page layouts pad again).
    static func trimmingZeros(_ bytes: [UInt8]) -> [UInt8] {
        let end = (bytes.lastIndex { $0 != 0 }).map { $0 + 1 } ?? 0
        return Array(bytes[..<max(end, min(4, bytes.count))])
    }
}
