/**
 * The one place that maps a pool kind to its generated IRI service. Everything else in src/iri
 * works on the kind-neutral {@link RuntimeService}, so the client and the test runtime exist once
 * for all kinds; which call is the probe comes from the kinds table, not from here.
 */
import type {PoolKind, PoolKindName} from '../core/index.ts'
import {BucketRuntimeDefinition} from './gen/bucket/v1alpha1/api.ts'
import {MachineRuntimeDefinition} from './gen/machine/v1alpha1/api.ts'
import {VolumeRuntimeDefinition} from './gen/volume/v1alpha1/api.ts'

/** A ts-proto message's codec, with the message type left opaque (ironpool never reads a probe's answer). */
export interface MessageCodec {
  encode(message: unknown): {finish(): Uint8Array}
  decode(input: Uint8Array): unknown
  fromPartial(object: unknown): unknown
}

/** A unary call in ts-proto's generic-definitions shape, which nice-grpc accepts for clients and servers. */
export interface UnaryCall {
  readonly name: string
  readonly requestType: MessageCodec
  readonly requestStream: false
  readonly responseType: MessageCodec
  readonly responseStream: false
  readonly options: object
}

interface GeneratedService {
  readonly name: string
  readonly fullName: string
  readonly methods: Readonly<Record<string, UnaryCall>>
}

const GENERATED: Readonly<Record<PoolKindName, GeneratedService>> = {
  machine: MachineRuntimeDefinition,
  volume: VolumeRuntimeDefinition,
  bucket: BucketRuntimeDefinition,
}

/** A kind's runtime reduced to the two calls ironpool makes, under kind-neutral keys. */
export interface RuntimeService {
  readonly name: string
  readonly fullName: string
  readonly methods: {
    readonly version: UnaryCall
    readonly probe: UnaryCall
  }
}

/** The gRPC path of a call, as it goes on the wire: `/<package>.<service>/<method>`. */
export function methodPath(service: RuntimeService, call: UnaryCall): string {
  return `/${service.fullName}/${call.name}`
}

/**
 * The kind's runtime service. Throws when the kinds table and the generated code disagree, which
 * means the protos or the table were edited without the other: better at start-up than on the wire.
 */
export function runtimeServiceFor(kind: PoolKind): RuntimeService {
  const generated = GENERATED[kind.name]
  if (generated.fullName !== kind.runtimeService) {
    throw new Error(`IRI service for ${kind.name} is ${generated.fullName}, but the kinds table says ${kind.runtimeService}`)
  }
  const calls = Object.values(generated.methods)
  const probe = calls.find((call) => call.name === kind.probeMethod)
  const version = calls.find((call) => call.name === 'Version')
  if (probe === undefined || version === undefined) {
    throw new Error(`IRI service ${generated.fullName} lacks ${probe === undefined ? kind.probeMethod : 'Version'}`)
  }
  return {name: generated.name, fullName: generated.fullName, methods: {version, probe}}
}
