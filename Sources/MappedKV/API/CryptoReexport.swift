// `CryptKey` (and the rest of the crypto layer's public API) is declared in `MappedKVCrypto`;
// re-exported so that `import MappedKV` is all a caller needs to open an encrypted store.
@_exported import MappedKVCrypto
