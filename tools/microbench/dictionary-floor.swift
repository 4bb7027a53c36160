// The floor under a memory cache's get on this machine: a bare `Dictionary<String, Int>` lookup
// and a bare `String` hash, at 100,000 keys named and read as the cache benchmark's memory workload
// does (`mem-<i>`, in order). Built and run by tools/microbench.sh; medians of 9 rounds.

import Dispatch

let count = 100_000
let keys = (0..<count).map { "mem-\(count + $0)" }
var table: [String: Int] = [:]
for (index, key) in keys.enumerated() { table[key] = index }

var lookups: [Double] = []
var hashes: [Double] = []
var sink = 0
for _ in 0..<9 {
    var start = DispatchTime.now().uptimeNanoseconds
    for key in keys { sink &+= table[key] ?? 0 }
    lookups.append(Double(DispatchTime.now().uptimeNanoseconds - start) / Double(count))
    start = DispatchTime.now().uptimeNanoseconds
    for key in keys { sink &+= key.hashValue }
    hashes.append(Double(DispatchTime.now().uptimeNanoseconds - start) / Double(count))
}
lookups.sort()
hashes.sort()
print("Dictionary<String, Int> lookup\t\(Int(lookups[4])) ns")
print("String hashValue\t\(Int(hashes[4])) ns")
if sink == 42 { print("") }  // keeps the loops from being optimized away
