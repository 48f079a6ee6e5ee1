/**
 * The IRI edge: what the rest of ironpool may use from src/iri. The test runtime (a gRPC server on
 * nice-grpc and grpc-js, for the sandbox and the tests) is imported from test-runtime.ts itself, so
 * that a poollet, which only probes, never loads a gRPC server stack.
 */
export {createRuntimeProbe, DEFAULT_TIMEOUT_MS} from './runtime-probe.ts'
export type {RuntimeClient, RuntimeProbeOptions} from './runtime-probe.ts'
export {discoverRuntimeEndpoint, normaliseEndpoint, DEFAULT_DISCOVERY_POLL_MS, DEFAULT_DISCOVERY_TIMEOUT_MS} from './endpoint.ts'
export type {DiscoverOptions} from './endpoint.ts'
