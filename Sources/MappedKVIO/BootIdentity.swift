import Glibc

/// The boot this process runs in: Linux's random boot ID (`/proc/sys/kernel/random/boot_id`),
/// which changes at every boot.
///
/// A file written in an earlier boot may have lost writes to a power failure that the page
/// cache of this boot never saw, so whatever was verified then must be verified again.
package enum BootIdentity {
    /// The 16 bytes of the boot ID, read once; nil when the kernel does not provide one, in which
    /// case every boot counts as another.
    package static let current: [UInt8]? = read()

    private static func read() -> [UInt8]? {
        guard let file = fopen("/proc/sys/kernel/random/boot_id", "r") else { return nil }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 64)
        guard fgets(&line, Int32(line.count), file) != nil else { return nil }
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let digits = Array(text.utf8.filter { $0 != UInt8(ascii: "-") && $0 != UInt8(ascii: "\n") })
        guard digits.count == 32 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        for index in stride(from: 0, to: 32, by: 2) {
            guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
