/** The IRI edge: what the rest of ironpool may use from src/iri. */
export {createRuntimeProbe, DEFAULT_CHANNEL_OPTIONS, DEFAULT_TIMEOUT_MS} from './runtime-probe.ts'
export type {RuntimeClient, RuntimeProbeOptions} from './runtime-probe.ts'
export {discoverRuntimeEndpoint, normaliseEndpoint, DEFAULT_DISCOVERY_POLL_MS, DEFAULT_DISCOVERY_TIMEOUT_MS} from './endpoint.ts'
export type {DiscoverOptions} from './endpoint.ts'
export {startTestRuntime, TEST_RUNTIME_NAME} from './test-runtime.ts'
export type {CallCounts, ProbeAnswer, RuntimeBehaviour, TestRuntime, TestRuntimeOptions} from './test-runtime.ts'
