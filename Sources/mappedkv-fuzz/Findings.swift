import Glibc

/// Stops the run on a broken invariant. libFuzzer sees the trap as a crash and saves the input.
///
/// Every message starts with `MAPPEDKV-FUZZ FINDING`, so a log search tells findings from
/// sanitizer reports and from ``harnessFailure(_:)``.
func finding(_ message: String, _ image: StoreImage, file: StaticString = #fileID, line: UInt = #line) -> Never {
    let text =
        "MAPPEDKV-FUZZ FINDING: \(message) [\(image.flags); meta file \(image.metaFile.map { "\($0.count) bytes" } ?? "missing"), data file \(image.dataFile.map { "\($0.count) bytes" } ?? "missing")\(image.journalFile.map { ", journal \($0.count) bytes" } ?? "")]"
    printToStandardError(text)
    fatalError(text, file: file, line: line)
}

/// Stops the run when the harness itself cannot work (a scratch file cannot be written, say).
/// This is not a finding about the store; the message says `MAPPEDKV-FUZZ HARNESS FAILURE`.
func harnessFailure(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    let text = "MAPPEDKV-FUZZ HARNESS FAILURE: \(message)"
    printToStandardError(text)
    fatalError(text, file: file, line: line)
}

/// Writes `text` and a newline to the standard error (unbuffered, so it precedes a trap's output).
func printToStandardError(_ text: String) {
    let line = Array((text + "\n").utf8)
    var written = 0
    while written < line.count {
        let count = line.withUnsafeBytes { write(2, $0.baseAddress.map { $0 + written }, line.count - written) }
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { return }
        written += count
    }
}
