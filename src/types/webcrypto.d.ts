// @peculiar/x509 is typed against the DOM's WebCrypto types, which this Node project does not load;
// Node's webcrypto objects are the same things, so name them globally for its declarations.
import type {webcrypto} from 'node:crypto'

declare global {
  type CryptoKey = webcrypto.CryptoKey
  type CryptoKeyPair = webcrypto.CryptoKeyPair
  type Crypto = webcrypto.Crypto
  type Algorithm = webcrypto.Algorithm
  type AlgorithmIdentifier = webcrypto.AlgorithmIdentifier
  type HashAlgorithmIdentifier = webcrypto.HashAlgorithmIdentifier
  type RsaHashedKeyGenParams = webcrypto.RsaHashedKeyGenParams
  type EcKeyGenParams = webcrypto.EcKeyGenParams
  type RsaHashedImportParams = webcrypto.RsaHashedImportParams
  type EcKeyImportParams = webcrypto.EcKeyImportParams
  type BufferSource = webcrypto.BufferSource
  type KeyUsage = webcrypto.KeyUsage
}
