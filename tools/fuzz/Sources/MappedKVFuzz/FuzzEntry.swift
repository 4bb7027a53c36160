import CLibFuzzer
import Glibc

/// libFuzzer's callback: one input, one ``Scenario``. Thrown store errors are expected; crashes,
/// hangs, sanitizer reports and ``finding(_:_:file:line:)`` traps are what libFuzzer records.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size)
    let image = StoreImage(input: input)
    let setValue = Array(input.suffix(input.count % 64))
    Scenario(image: image, scratch: ScratchDirectory.shared, setValue: setValue).run()
    return 0
}

/// The process entry point, under the name SwiftPM gives it.
///
/// SwiftPM links every executable target on Linux with `--defsym main=<module>_main` (to let tests
/// link against executables), so libFuzzer's own `main` is never the entry point; this one hands
/// the command line to libFuzzer's driver, which is what libFuzzer's `main` does. The one
/// addition is `--make-seeds VECTORS_DIR OUT_DIR` (see ``SeedMaker``), which exits before libFuzzer starts.
@_cdecl("mappedkv_fuzz_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    let arguments = (0..<Int(argc)).map { index in argv?[index].map { String(cString: $0) } ?? "" }
    if arguments.count > 1, arguments[1] == "--make-seeds" {
        guard arguments.count == 4 else {
            printToStandardError("usage: \(arguments[0]) --make-seeds VECTORS_DIR OUT_DIR")
            return 2
        }
        return SeedMaker(vectors: arguments[2], output: arguments[3]).run()
    }
    var count = argc
    var vector = argv
    return LLVMFuzzerRunDriver(&count, &vector, fuzzTestOneInput)
}
