/// A failure of the benchmark itself: a store call that returned an error, or a check of the
/// values read that did not add up. Either stops the run with the message.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
