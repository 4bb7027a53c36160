import Glibc

#if FUZZING
import CLibFuzzer
#endif

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

/// The process entry point.
///
/// Built with `-D FUZZING -sanitize=fuzzer` (tools/fuzz.sh), it hands the command line to libFuzzer's
/// driver, as libFuzzer's own `main` would: SwiftPM names an executable target's entry point after
/// the module and points the linker's `main` at it, so libFuzzer's `main` is never the one that
/// runs. In any other build there is no libFuzzer, and the arguments are inputs to replay, files
/// or directories of them (a crash artifact, a corpus), each run once through
/// ``fuzzTestOneInput(_:_:)``. Both take `--make-seeds VECTORS_DIR OUT_DIR` (see ``SeedMaker``).
@main
enum FuzzEntry {
    static func main() {
        let arguments = CommandLine.arguments
        if arguments.count > 1, arguments[1] == "--make-seeds" {
            guard arguments.count == 4 else {
                printToStandardError("usage: \(arguments[0]) --make-seeds VECTORS_DIR OUT_DIR")
                exit(2)
            }
            exit(SeedMaker(vectors: arguments[2], output: arguments[3]).run())
        }
        #if FUZZING
        var count = CommandLine.argc
        var vector: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&count, &vector, fuzzTestOneInput))
        #else
        exit(replay(Array(arguments.dropFirst())))
        #endif
    }

    /// Runs every input named by `paths` (a directory stands for the files in it) once.
    static func replay(_ paths: [String]) -> CInt {
        guard !paths.isEmpty, !paths.contains(where: { $0.hasPrefix("-") }) else {
            printToStandardError(
                "usage: mappedkv-fuzz INPUT_OR_DIRECTORY... (replays inputs; tools/fuzz.sh builds the fuzzer)")
            return 2
        }
        var count = 0
        for path in paths {
            let files =
                PlainFiles.isDirectory(path) ? PlainFiles.list(path).map { path + "/" + $0 } : [path]
            for file in files where !PlainFiles.isDirectory(file) {
                guard let bytes = PlainFiles.read(file) else {
                    printToStandardError("no such input: \(file)")
                    return 1
                }
                if Scenario.tracing { printToStandardError("input \(file)") }
                _ = bytes.withUnsafeBufferPointer { fuzzTestOneInput($0.baseAddress, $0.count) }
                count += 1
            }
        }
        print("replayed \(count) inputs, no findings")
        return 0
    }
}
