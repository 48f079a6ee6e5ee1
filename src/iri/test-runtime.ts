/**
 * A stand-in IRI runtime for any pool kind: a real gRPC server on a unix socket whose behaviour can
 * be switched while it runs. Integration tests talk to it, and the sandbox runs it in-process so a
 * laptop can play a pool whose runtime answers, fails, crawls or hangs.
 */
import {rm} from 'node:fs/promises'
import {delay, forever, isAbortError} from 'abort-controller-x'
import {ServerError, createServer} from 'nice-grpc'
import type {CallContext, Status} from 'nice-grpc'
import type {PoolKind, PoolKindName} from '../core/index.ts'
import {runtimeServiceFor} from './runtime-service.ts'

/** What the runtime does with each call (Version and the probe alike). */
export type RuntimeBehaviour =
  | {readonly mode: 'answer'}
  | {readonly mode: 'fail'; readonly code: Status; readonly message: string}
  | {readonly mode: 'slow'; readonly delayMs: number}
  | {readonly mode: 'hang'}

export interface TestRuntimeOptions {
  kind: PoolKind
  /** Where to listen; a stale file there is removed first. */
  socketPath: string
  /** Default: answer. */
  behaviour?: RuntimeBehaviour
  /**
   * What the probe answers. 'ordinary' (default): one plausible class; 'int64-above-2^53': the same with
   * every int64 field far above 2^53 (up to 2^63 - 1), as real pools report capacities in bytes.
   */
  answer?: ProbeAnswer
}

export type ProbeAnswer = 'ordinary' | 'int64-above-2^53'

export interface CallCounts {
  /** Calls of the kind's probe method received. */
  probe: number
  version: number
  /** Calls the client gave up on (deadline, abort) while the runtime was still working on them. */
  cancelled: number
}

export interface TestRuntime {
  readonly kind: PoolKind
  readonly socketPath: string
  /** The gRPC target: `unix://<socketPath>`. */
  readonly endpoint: string
  /** Live counters, read them at any time. */
  readonly calls: Readonly<CallCounts>
  /** Switches behaviour; calls already waiting keep the behaviour they started with. */
  behave(behaviour: RuntimeBehaviour): void
  /** Cancels calls in flight, closes the server and removes the socket. */
  stop(): Promise<void>
}

export const TEST_RUNTIME_NAME = 'ironpool-test-runtime'

/** One plausible class per kind, so a probe's answer is not empty on the wire. */
const ORDINARY: Readonly<Record<PoolKindName, object>> = {
  machine: {
    machineClassStatus: [
      {machineClass: {name: 'sandbox-small', capabilities: {resources: {cpu: 2n, memory: 4n * 2n ** 30n}}}, quantity: 8n},
    ],
  },
  volume: {
    volumeClassStatus: [{volumeClass: {name: 'sandbox-fast', capabilities: {tps: 250n * 2n ** 20n, iops: 15000n}}, quantity: 100n * 2n ** 30n}],
  },
  bucket: {bucketClasses: [{name: 'sandbox-standard', capabilities: {tps: 100n * 2n ** 20n, iops: 1000n}}]},
}

const INT64_MAX = 2n ** 63n - 1n
const ABOVE_2_53 = 2n ** 53n + 1n

/** Every int64 field above 2^53, where a decoder into JavaScript numbers loses precision or refuses. */
const HUGE: Readonly<Record<PoolKindName, object>> = {
  machine: {
    machineClassStatus: [{machineClass: {name: 'huge', capabilities: {resources: {cpu: ABOVE_2_53, memory: INT64_MAX}}}, quantity: INT64_MAX}],
  },
  volume: {volumeClassStatus: [{volumeClass: {name: 'huge', capabilities: {tps: INT64_MAX, iops: ABOVE_2_53}}, quantity: INT64_MAX}]},
  bucket: {bucketClasses: [{name: 'huge', capabilities: {tps: INT64_MAX, iops: ABOVE_2_53}}]},
}

const PROBE_ANSWERS: Readonly<Record<ProbeAnswer, Readonly<Record<PoolKindName, object>>>> = {ordinary: ORDINARY, 'int64-above-2^53': HUGE}

export async function startTestRuntime(options: TestRuntimeOptions): Promise<TestRuntime> {
  const {kind, socketPath} = options
  const service = runtimeServiceFor(kind)
  const calls: CallCounts = {probe: 0, version: 0, cancelled: 0}
  let behaviour: RuntimeBehaviour = options.behaviour ?? {mode: 'answer'}

  async function respond<T>(answer: T, {signal}: CallContext): Promise<T> {
    const current = behaviour
    try {
      switch (current.mode) {
        case 'answer':
          return answer
        case 'fail':
          throw new ServerError(current.code, current.message)
        case 'slow':
          await delay(signal, current.delayMs)
          return answer
        case 'hang':
          return await forever(signal)
      }
    } catch (error) {
      if (isAbortError(error)) calls.cancelled++
      throw error
    }
  }

  const server = createServer()
  server.add(service, {
    version: (_request: unknown, context: CallContext) => {
      calls.version++
      return respond({runtimeName: TEST_RUNTIME_NAME, runtimeVersion: '0.1.0'}, context)
    },
    probe: (_request: unknown, context: CallContext) => {
      calls.probe++
      return respond(PROBE_ANSWERS[options.answer ?? 'ordinary'][kind.name], context)
    },
  })
  await rm(socketPath, {force: true})
  await server.listen(`unix://${socketPath}`)

  return {
    kind,
    socketPath,
    endpoint: `unix://${socketPath}`,
    calls,
    behave(next: RuntimeBehaviour): void {
      behaviour = next
    },
    async stop(): Promise<void> {
      // Forced: a graceful shutdown would wait for hanging calls, which may never end.
      server.forceShutdown()
      await rm(socketPath, {force: true})
    },
  }
}
