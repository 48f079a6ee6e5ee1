/**
 * The probe's deadline reaches the runtime as a gRPC deadline (the grpc-timeout header), as a Go
 * client's context deadline does, not only as a cancel when the client gives up. The runtime here is
 * a plain grpc-js server, because nice-grpc's server does not show a handler its call's deadline.
 */
import {join} from 'node:path'
import {Server, ServerCredentials, type ServerUnaryCall, type sendUnaryData, type UntypedServiceImplementation} from '@grpc/grpc-js'
import {expect} from 'chai'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import {createRuntimeProbe} from '../../../src/iri/index.ts'
import {methodPath, runtimeServiceFor} from '../../../src/iri/runtime-service.ts'
import {grpcTimeout} from '../../../src/iri/wire-deadline.ts'
import {socketDir, within} from './support.ts'

const DEADLINE_MS = 1500
const GUARD_MS = 5000

describe('IRI probe deadline on the wire', () => {
  it('writes grpc-timeout in milliseconds, or seconds past eight digits', () => {
    expect(grpcTimeout(1500)).to.equal('1500m')
    expect(grpcTimeout(0.2)).to.equal('1m')
    expect(grpcTimeout(-5)).to.equal('0m')
    expect(grpcTimeout(100_000_000)).to.equal('100000S')
  })

  for (const kind of Object.values(POOL_KINDS)) {
    it(`${kind.name}: the runtime sees a deadline no later than the probe's timeout`, async () => {
      const dir = await socketDir()
      const service = runtimeServiceFor(kind)
      const probeCall = service.methods.probe
      const seen: {deadline: number; sentAt: number; metadataKeys: string[]}[] = []
      const server = new Server()
      const implementation: UntypedServiceImplementation = {
        probe: (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
          const deadline = call.getDeadline()
          seen.push({deadline: deadline instanceof Date ? deadline.getTime() : deadline, sentAt: Date.now(), metadataKeys: Object.keys(call.metadata.getMap())})
          callback(null, {})
        },
      }
      server.addService(
        {
          probe: {
            path: methodPath(service, probeCall),
            requestStream: false,
            responseStream: false,
            requestSerialize: (value: unknown) => Buffer.from(probeCall.requestType.encode(value).finish()),
            requestDeserialize: (bytes: Buffer) => probeCall.requestType.decode(bytes),
            responseSerialize: (value: unknown) => Buffer.from(probeCall.responseType.encode(probeCall.responseType.fromPartial(value)).finish()),
            responseDeserialize: (bytes: Buffer) => probeCall.responseType.decode(bytes),
          },
        },
        implementation,
      )
      const socket = join(dir.dir, 'runtime.sock')
      await new Promise<void>((resolve, reject) => server.bindAsync(`unix://${socket}`, ServerCredentials.createInsecure(), (error) => (error ? reject(error) : resolve())))
      const probe = createRuntimeProbe(kind, `unix://${socket}`, {timeoutMs: DEADLINE_MS})
      try {
        await within(GUARD_MS, 'probe', probe.probe(new AbortController().signal))
        expect(seen).to.have.length(1)
        const [call] = seen
        // A finite deadline (Infinity when the client sends none), within the probe's timeout of the call's arrival.
        expect(call!.deadline).to.be.finite
        expect(call!.deadline - call!.sentAt).to.be.at.most(DEADLINE_MS)
        expect(call!.metadataKeys).to.not.include('grpc-timeout')
      } finally {
        probe.close()
        server.forceShutdown()
        await dir.remove()
      }
    })
  }
})
